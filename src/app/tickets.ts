import { randomUUID } from 'node:crypto';
import { badRequest, idempotencyKeyReused, notFound } from '../errors.js';
import { requestFingerprint } from '../domain/fingerprint.js';
import { IDEMPOTENCY_KEY_TTL_MS } from '../store/request-keys/port.js';
import type { Clock } from '../clock.js';
import type { Principal, Ticket, TicketActivity, TicketOrigin } from '../domain/types.js';
import { applyTicketChanges, initialResolutionDate, resolutionDateOnOpenTicket, TICKET_ID_PATTERN } from '../domain/ticket-rules.js';
import { contactOpenTicket, type Store, type TicketEventStamp } from '../store/index.js';
import { requireScope } from './principal.js';
import { UNASSIGNED, type CreateTicketInput, type ListTicketsInput, type TicketActivityQuery, type UpdateTicketInput } from './schemas.js';

export interface TicketList {
  tickets: Ticket[];
  total: number;
  /** `gte`: a text search stopped counting (see `TEXT_SEARCH_TOTAL_CAP`). */
  totalRelation: 'eq' | 'gte';
  page: number;
  totalPages: number;
  nextCursor: string | null;
}

/** Who did something to a ticket, as the activity shows it: `system` when the service itself did. */
export interface TicketActor {
  kind: TicketOrigin['kind'] | 'system';
  userId: string | null;
  /** The user's name now (null when the user is gone or it was the service). */
  userName: string | null;
  keyId: string | null;
  keyName: string | null;
}

/** An activity entry as the API shows it: the actor with their name. */
export type TicketActivityView = Omit<TicketActivity, 'actor'> & { actor: TicketActor };

export interface TicketActivityList {
  entries: TicketActivityView[];
  /** Pass as `cursor` for the entries after these; null when there are none yet. */
  nextCursor: string | null;
}

/**
 * Called after a ticket change committed. The change's event is already
 * recorded in the store's outbox with it; listeners only need to react
 * (the server kicks its outbox relay).
 */
export type TicketListener = (event: 'ticket.created' | 'ticket.updated' | 'ticket.commented', ticket: Ticket, principal: Principal | null) => Promise<void>;

/**
 * Tickets as a caller sees them. Visibility follows the key's owner: an admin
 * sees every ticket of the organization, an agent those assigned to them or
 * unassigned. Tickets a caller cannot see answer exactly like missing ones.
 */
export class TicketService {
  private readonly listeners: TicketListener[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  onChange(listener: TicketListener): void {
    this.listeners.push(listener);
  }

  private async emit(event: 'ticket.created' | 'ticket.updated' | 'ticket.commented', ticket: Ticket, principal: Principal | null): Promise<void> {
    for (const l of this.listeners) await l(event, ticket, principal);
  }

  /** The event recorded with the change; its id stays the same through every relay attempt. */
  private stamp(type: TicketEventStamp['type'], now: string): TicketEventStamp {
    return { id: randomUUID(), type, createdAt: now };
  }

  private visible(principal: Principal, t: Ticket): boolean {
    return principal.role === 'admin' || t.assigneeId === null || t.assigneeId === principal.userId;
  }

  private async checkAssignee(organizationId: string, assigneeId: string | null | undefined): Promise<void> {
    if (assigneeId === undefined || assigneeId === null) return;
    if (!(await this.store.users.get(organizationId, assigneeId))) {
      throw badRequest('unknown_assignee', 'assigneeId is not a user of this organization', { field: 'assigneeId' });
    }
  }

  /**
   * Creates a ticket. With an idempotency key (scoped to the caller's user),
   * a repeat within 24 hours with the same input creates nothing and returns
   * the first create's ticket as it is now; with another input it is refused
   * (422 `idempotency_key_reused`). The key's record is written atomically
   * with the ticket, so racing repeats create one ticket, on any node.
   */
  async create(principal: Principal, input: CreateTicketInput, idempotencyKey?: string, via?: 'mcp'): Promise<Ticket> {
    requireScope(principal, 'tickets:create');
    const org = principal.organizationId;
    let audienceId: string | null = null;
    const [contact] = await Promise.all([
      input.audienceExternalId === undefined ? null : this.store.contacts.get(org, input.audienceExternalId),
      this.checkAssignee(org, input.assigneeId),
    ]);
    if (input.audienceExternalId !== undefined) {
      if (!contact) throw badRequest('unknown_contact', 'audienceExternalId matches no contact of this organization', { field: 'audienceExternalId' });
      audienceId = contact.id;
    }
    const now = new Date(this.clock.now()).toISOString();
    const status = input.status ?? 'open';
    const draft = {
      _id: randomUUID(),
      title: (input.subject ?? input.title)!,
      description: input.description,
      status,
      priority: input.priority ?? 'medium',
      assigneeId: input.assigneeId ?? null,
      audienceId,
      audienceExternalId: contact?.audienceExternalId ?? null,
      organizationId: org,
      resolutionDate: initialResolutionDate(status, now),
      createdBy: ticketOrigin(principal, via),
      createdAt: now,
      updatedAt: now,
    };
    if (idempotencyKey === undefined) {
      const ticket = await this.store.tickets.create(draft, this.stamp('ticket.created', now));
      await this.emit('ticket.created', ticket, principal);
      return ticket;
    }
    const once = await this.store.tickets.createOnce(draft, this.stamp('ticket.created', now), {
      key: `ticket:${principal.userId}:${idempotencyKey}`,
      fingerprint: requestFingerprint('ticket.create', input),
      ttlMs: IDEMPOTENCY_KEY_TTL_MS,
    });
    if (once.outcome === 'reused') throw idempotencyKeyReused();
    if (once.outcome === 'created') await this.emit('ticket.created', once.ticket, principal);
    return this.withAudience(once.ticket);
  }

  /**
   * A ticket an automation rule creates for a conversation's contact: no
   * user acts, so it has no origin (`createdBy: null`, its activity names
   * the service). `onceKey` names the rule's action on one message: a repeat
   * within 24 hours creates nothing and returns the first ticket. Null when
   * the conversation has no contact.
   */
  async createByAutomation(organizationId: string, input: { subject: string; description: string; audienceExternalId: string }, onceKey: string): Promise<Ticket | null> {
    const contact = await this.store.contacts.get(organizationId, input.audienceExternalId);
    if (contact === null) return null;
    const now = new Date(this.clock.now()).toISOString();
    const draft = {
      _id: randomUUID(),
      title: input.subject,
      description: input.description,
      status: 'open' as const,
      priority: 'medium' as const,
      assigneeId: null,
      audienceId: contact.id,
      audienceExternalId: contact.audienceExternalId,
      organizationId,
      resolutionDate: null,
      createdBy: null,
      createdAt: now,
      updatedAt: now,
    };
    const once = await this.store.tickets.createOnce(draft, this.stamp('ticket.created', now), {
      key: `ticket:automation:${onceKey}`,
      fingerprint: requestFingerprint('ticket.create.automation', { subject: input.subject, audienceExternalId: input.audienceExternalId }),
      ttlMs: IDEMPOTENCY_KEY_TTL_MS,
    });
    if (once.outcome === 'created') await this.emit('ticket.created', once.ticket, null);
    return once.outcome === 'reused' ? null : once.ticket;
  }

  /**
   * An automation rule sets the priority of the contact's open ticket (its
   * newest one neither resolved nor closed). Null when it has none; the
   * ticket unchanged when it already has that priority.
   */
  async setPriorityByAutomation(organizationId: string, audienceExternalId: string, priority: Ticket['priority']): Promise<Ticket | null> {
    const contact = await this.store.contacts.get(organizationId, audienceExternalId);
    if (contact === null) return null;
    const open = await contactOpenTicket(this.store.tickets, organizationId, contact.id);
    if (open === undefined) return null;
    if (open.priority === priority) return open;
    const now = new Date(this.clock.now()).toISOString();
    const updated = await this.store.tickets.update(organizationId, open.ticketId, (current) => applyTicketChanges(current, { priority }, now), this.stamp('ticket.updated', now), null);
    if (updated === null) return null;
    await this.emit('ticket.updated', updated, null);
    return updated;
  }

  /** Tickets stored before `audienceExternalId` existed get it from their contact. */
  private async withAudience(t: Ticket): Promise<Ticket> {
    if (t.audienceId === null || t.audienceExternalId !== null) return t;
    const contact = await this.store.contacts.getById(t.organizationId, t.audienceId);
    return contact ? { ...t, audienceExternalId: contact.audienceExternalId } : t;
  }

  async get(principal: Principal, ticketId: string): Promise<Ticket> {
    requireScope(principal, 'tickets:read');
    const t = TICKET_ID_PATTERN.test(ticketId) ? await this.store.tickets.get(principal.organizationId, ticketId) : null;
    if (!t || !this.visible(principal, t)) throw notFound('ticket');
    return this.withAudience(t);
  }

  async list(principal: Principal, q: ListTicketsInput): Promise<TicketList> {
    requireScope(principal, 'tickets:read');
    const org = principal.organizationId;
    let audienceId: string | undefined;
    if (q.audienceExternalId !== undefined) {
      const contact = await this.store.contacts.get(org, q.audienceExternalId);
      if (!contact) return { tickets: [], total: 0, totalRelation: 'eq', page: q.page, totalPages: 0, nextCursor: null };
      audienceId = contact.id;
    }
    const { tickets, total, totalRelation, next } = await this.store.tickets.list({
      organizationId: org,
      status: q.status,
      priority: q.priority,
      audienceId,
      assigneeId: q.assigneeId === undefined ? undefined : q.assigneeId === UNASSIGNED ? null : q.assigneeId,
      visibleToAgent: principal.role === 'admin' ? undefined : principal.userId,
      ...(q.q === undefined ? {} : { text: q.q }),
      offset: (q.page - 1) * q.limit,
      limit: q.limit,
      ...(q.cursor === undefined ? {} : { before: Number(q.cursor) }),
    });
    return {
      tickets: await Promise.all(tickets.map((t) => this.withAudience(t))),
      total,
      totalRelation,
      page: q.page,
      totalPages: Math.ceil(total / q.limit),
      nextCursor: next === null ? null : String(next),
    };
  }

  async update(principal: Principal, ticketId: string, input: UpdateTicketInput, via?: 'mcp'): Promise<Ticket> {
    requireScope(principal, 'tickets:update');
    const org = principal.organizationId;
    await this.checkAssignee(org, input.assigneeId);
    const now = new Date(this.clock.now()).toISOString();
    const updated = TICKET_ID_PATTERN.test(ticketId)
      ? await this.store.tickets.update(org, ticketId, (current) => {
          if (!this.visible(principal, current)) return null;
          const changes = {
            title: input.subject ?? input.title,
            description: input.description,
            status: input.status,
            priority: input.priority,
            assigneeId: input.assigneeId,
            resolutionDate: input.resolutionDate,
          };
          if (resolutionDateOnOpenTicket(current, changes)) {
            throw badRequest('resolution_date_on_open_ticket', 'only a resolved or closed ticket has a resolutionDate: send status resolved or closed with it', { field: 'resolutionDate' });
          }
          return applyTicketChanges(current, changes, now);
        },
          this.stamp('ticket.updated', now),
          ticketOrigin(principal, via),
        )
      : null;
    if (!updated) throw notFound('ticket');
    await this.emit('ticket.updated', updated, principal);
    return this.withAudience(updated);
  }

  /** Adds an agent's comment to a ticket the caller can see; its `ticket.commented` event is recorded with it. */
  async comment(principal: Principal, ticketId: string, text: string, via?: 'mcp'): Promise<TicketActivityView> {
    requireScope(principal, 'tickets:update');
    const now = new Date(this.clock.now()).toISOString();
    const done = TICKET_ID_PATTERN.test(ticketId)
      ? await this.store.tickets.comment(principal.organizationId, ticketId, { id: randomUUID(), text, actor: ticketOrigin(principal, via), at: now }, randomUUID(), (t) => this.visible(principal, t))
      : null;
    if (!done) throw notFound('ticket');
    await this.emit('ticket.commented', done.ticket, principal);
    const [view] = await this.withActors(principal.organizationId, [done.entry]);
    return view!;
  }

  /** The ticket's creation, changes and comments, oldest first, a page at a time. */
  async activity(principal: Principal, ticketId: string, q: TicketActivityQuery): Promise<TicketActivityList> {
    requireScope(principal, 'tickets:read');
    const ticket = await this.get(principal, ticketId);
    const page = await this.store.tickets.activity(principal.organizationId, ticket.ticketId, q.cursor === undefined ? 0 : Number(q.cursor), q.limit);
    return { entries: await this.withActors(principal.organizationId, page.entries), nextCursor: page.next === null ? null : String(page.next) };
  }

  private async withActors(organizationId: string, entries: TicketActivity[]): Promise<TicketActivityView[]> {
    const ids = new Set(entries.flatMap((e) => (e.actor === null ? [] : [e.actor.userId])));
    const names = new Map<string, string>();
    await Promise.all(
      [...ids].map(async (id) => {
        const user = await this.store.users.get(organizationId, id);
        if (user) names.set(id, user.name);
      }),
    );
    return entries.map((e) => ({
      ...e,
      actor:
        e.actor === null
          ? { kind: 'system', userId: null, userName: null, keyId: null, keyName: null }
          : { kind: e.actor.kind, userId: e.actor.userId, userName: names.get(e.actor.userId) ?? null, keyId: e.actor.keyId, keyName: e.actor.keyName },
    }));
  }
}

/** Who is making a ticket, as the ticket records it. */
function ticketOrigin(p: Principal, via: 'mcp' | undefined): TicketOrigin {
  const session = p.keyId.startsWith('session:');
  return {
    kind: via === 'mcp' ? 'mcp' : session ? 'session' : 'api_key',
    userId: p.userId,
    keyId: session ? null : p.keyId,
    keyName: session ? null : (p.keyName ?? null),
  };
}
