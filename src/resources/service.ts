import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors.js';
import type { DomainEvent, EventPublisher } from '../events/index.js';
import type { Resource, ResourceStore } from '../store/index.js';

export interface ResourceView {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export function resourceView(r: Resource): ResourceView {
  return { id: r.id, name: r.name, type: r.type, config: r.config, createdAt: r.createdAt, updatedAt: r.updatedAt };
}

const eventLogDown = (cause: unknown) =>
  new AppError(503, 'event_log_unavailable', 'the change could not be recorded; nothing was changed, try again', undefined, { cause, retryAfterSeconds: 1 });

/**
 * The generic `/api/v1/resource` records. Every change publishes its event
 * (`resource.created`, `resource.updated`) before the caller gets its answer;
 * when the event cannot be recorded the change is undone and the caller gets
 * a retryable 503, so an acknowledged change always has its event.
 */
export class ResourceService {
  constructor(
    private readonly store: ResourceStore,
    private readonly events: EventPublisher,
    private readonly now: () => number = Date.now,
  ) {}

  private event(type: 'resource.created' | 'resource.updated', r: Resource, at: string): DomainEvent {
    return { id: randomUUID(), type, organizationId: r.organizationId, createdAt: at, data: resourceView(r) };
  }

  async create(organizationId: string, input: { name: string; type: string; config: Record<string, unknown> }): Promise<Resource> {
    const at = new Date(this.now()).toISOString();
    const r: Resource = { id: randomUUID(), organizationId, name: input.name, type: input.type, config: input.config, createdAt: at, updatedAt: at, version: 1 };
    await this.store.create(r);
    try {
      await this.events.publish(this.event('resource.created', r, at));
    } catch (e) {
      await this.store.delete(organizationId, r.id);
      throw eventLogDown(e);
    }
    return r;
  }

  async get(organizationId: string, id: string): Promise<Resource> {
    const r = await this.store.get(organizationId, id);
    if (r === null) throw notFound('resource');
    return r;
  }

  async list(organizationId: string, page: number, limit: number) {
    const { resources, total } = await this.store.list(organizationId, { offset: (page - 1) * limit, limit });
    return { resources: resources.map(resourceView), total, page, totalPages: Math.ceil(total / limit) };
  }

  /** Changes the fields given (config is replaced whole). */
  async update(organizationId: string, id: string, change: { name?: string; type?: string; config?: Record<string, unknown> }): Promise<Resource> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.get(organizationId, id);
      const at = new Date(this.now()).toISOString();
      const next: Resource = { ...cur, ...change, updatedAt: at, version: cur.version + 1 };
      if (!(await this.store.replace(cur, next))) continue;
      try {
        await this.events.publish(this.event('resource.updated', next, at));
      } catch (e) {
        await this.store.replace(next, { ...cur, version: next.version + 1 });
        throw eventLogDown(e);
      }
      return next;
    }
    throw new AppError(409, 'concurrent_update', 'the resource kept changing; try again');
  }
}
