import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, badRequest, notFound } from '../errors.js';
import { EVENT_TYPES } from '../events/index.js';
import type { DeliveryStatus, LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from '../store/index.js';
import { checkWebhookUrl, type AddressPolicy } from './address-guard.js';
import type { HttpOutcome, WebhookHttpClient } from './http-client.js';
import { generateSecret } from './signing.js';

/** Names a registration may subscribe to: every event type, or `*`. */
export const SUBSCRIBABLE_EVENTS: readonly string[] = [...EVENT_TYPES, '*'];

/** A registration as the API shows it: never the secret. */
export interface PublicRegistration {
  id: string;
  url: string;
  events: string[];
  status: WebhookRegistration['status'];
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function publicRegistration(r: WebhookRegistration): PublicRegistration {
  return { id: r.id, url: r.url, events: r.events, status: r.status, disabledReason: r.disabledReason, createdAt: r.createdAt, updatedAt: r.updatedAt };
}

/** A delivery as the API shows it (the payload is the exact body sent). */
export function publicDelivery(d: WebhookDelivery) {
  return {
    id: d.id,
    registrationId: d.registrationId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attemptCount: d.attemptCount,
    nextAttemptAt: d.nextAttemptAt,
    retryUntil: d.retryUntil,
    attempts: d.attempts,
    payload: d.payload,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export interface WebhookRegistrationsOptions {
  store: WebhookStore;
  http: WebhookHttpClient;
  policy: AddressPolicy;
  /** Retry window a resend starts afresh. */
  retryWindowMs: number;
  /** How long a rotated-out secret keeps signing (default 24 h). */
  rotationGraceMs?: number;
  /** Told when deliveries were (re)scheduled, so this node's dispatcher looks at once. */
  onScheduled?: (lane: LaneRef) => void;
  now?: () => number;
}

/**
 * Registration rules, as plain operations over the store (the HTTP routes
 * only translate). Ownership of a URL is proven by the challenge: the service
 * sends `GET <url>?challenge=<random>` and saves the registration only when
 * the URL answers 200 with that value (plain text or `{"challenge": ...}`).
 */
export class WebhookRegistrations {
  private readonly now: () => number;

  constructor(private readonly opts: WebhookRegistrationsOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Validates a URL and event list as given in a request; throws 400 naming the problem. */
  validate(url: string, events: string[]): { url: string; events: string[] } {
    const check = checkWebhookUrl(url, this.opts.policy);
    if (!check.ok) throw badRequest('invalid_webhook_url', check.reason, { field: 'url' });
    if (events.length === 0) throw badRequest('invalid_events', 'events must name at least one event (or "*")', { field: 'events' });
    const unknown = events.filter((e) => !SUBSCRIBABLE_EVENTS.includes(e));
    if (unknown.length > 0) throw badRequest('invalid_events', `unknown event names: ${unknown.join(', ')}`, { field: 'events', unknown, allowed: SUBSCRIBABLE_EVENTS });
    if (new Set(events).size !== events.length) throw badRequest('invalid_events', 'events lists a name twice', { field: 'events' });
    return { url: check.url.href, events };
  }

  async create(organizationId: string, input: { url: string; events: string[] }): Promise<WebhookRegistration> {
    const { url, events } = this.validate(input.url, input.events);
    // Cheap early 409 before contacting the receiver; the store decides for real.
    const existing = await this.opts.store.listRegistrations(organizationId);
    if (existing.some((r) => r.url === url)) throw new AppError(409, 'webhook_url_taken', 'this URL is already registered in the organization', { url });
    await this.challenge(url);
    const at = new Date(this.now()).toISOString();
    const reg: WebhookRegistration = {
      id: randomUUID(),
      organizationId,
      url,
      events,
      secret: generateSecret(),
      previousSecret: null,
      status: 'active',
      disabledReason: null,
      createdAt: at,
      updatedAt: at,
    };
    await this.opts.store.createRegistration(reg);
    return reg;
  }

  /** The ownership check. Throws 400 `webhook_challenge_failed` saying why. */
  async challenge(url: string): Promise<void> {
    const challenge = randomBytes(16).toString('hex');
    const target = new URL(url);
    target.searchParams.set('challenge', challenge);
    const o: HttpOutcome = await this.opts.http.get(target.href);
    const fail = (why: string) => badRequest('webhook_challenge_failed', `the URL did not answer the challenge: ${why}`, { field: 'url', status: o.status });
    if (o.status === null) throw fail(o.error ?? 'no response');
    if (o.status !== 200) throw fail(o.status >= 300 && o.status < 400 ? `HTTP ${o.status} (redirects are not followed)` : `HTTP ${o.status}`);
    const body = o.body.trim();
    if (body === challenge) return;
    try {
      const parsed = JSON.parse(body) as unknown;
      if (typeof parsed === 'object' && parsed !== null && (parsed as { challenge?: unknown }).challenge === challenge) return;
    } catch {
      // not JSON: fall through
    }
    throw fail('the body was neither the challenge value nor {"challenge": value}');
  }

  async list(organizationId: string): Promise<WebhookRegistration[]> {
    return this.opts.store.listRegistrations(organizationId);
  }

  async get(organizationId: string, id: string): Promise<WebhookRegistration> {
    const r = await this.opts.store.getRegistration(organizationId, id);
    if (r === null) throw notFound('webhook');
    return r;
  }

  /** Changes the events and/or re-enables (or disables) a registration. */
  async update(organizationId: string, id: string, change: { events?: string[]; enabled?: boolean }): Promise<WebhookRegistration> {
    const cur = await this.get(organizationId, id);
    const events = change.events === undefined ? cur.events : this.validate(cur.url, change.events).events;
    const status = change.enabled === undefined ? cur.status : change.enabled ? 'active' : 'disabled';
    const next: WebhookRegistration = {
      ...cur,
      events,
      status,
      disabledReason: status === 'active' ? null : change.enabled === false ? 'disabled by its owner' : cur.disabledReason,
      updatedAt: new Date(this.now()).toISOString(),
    };
    if (!(await this.opts.store.updateRegistration(next))) throw notFound('webhook');
    return next;
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!(await this.opts.store.deleteRegistration(organizationId, id))) throw notFound('webhook');
  }

  /** A new secret; the old one keeps signing (Standard Webhooks header only) for the grace period. */
  async rotateSecret(organizationId: string, id: string): Promise<WebhookRegistration> {
    const cur = await this.get(organizationId, id);
    const now = this.now();
    const next: WebhookRegistration = {
      ...cur,
      secret: generateSecret(),
      previousSecret: { secret: cur.secret, expiresAt: new Date(now + (this.opts.rotationGraceMs ?? 86_400_000)).toISOString() },
      updatedAt: new Date(now).toISOString(),
    };
    if (!(await this.opts.store.updateRegistration(next))) throw notFound('webhook');
    return next;
  }

  async listDeliveries(organizationId: string, registrationId: string, q: { status?: DeliveryStatus; page: number; limit: number }) {
    await this.get(organizationId, registrationId);
    const { deliveries, total } = await this.opts.store.listDeliveries(organizationId, registrationId, { status: q.status, offset: (q.page - 1) * q.limit, limit: q.limit });
    return { deliveries, total, page: q.page, totalPages: Math.ceil(total / q.limit) };
  }

  async getDelivery(organizationId: string, registrationId: string, deliveryId: string): Promise<WebhookDelivery> {
    const d = await this.opts.store.getDelivery(organizationId, deliveryId);
    if (d === null || d.registrationId !== registrationId) throw notFound('delivery');
    return d;
  }

  /**
   * Sends a delivery again (typically a failed one): pending now, with a
   * fresh retry window. Same body and `webhook-id`, so receivers can drop it
   * if they did process it. 409 while it is still pending.
   */
  async resend(organizationId: string, registrationId: string, deliveryId: string): Promise<WebhookDelivery> {
    const reg = await this.get(organizationId, registrationId);
    if (reg.status !== 'active') throw new AppError(409, 'webhook_disabled', 'the registration is disabled; enable it first', { disabledReason: reg.disabledReason });
    const d = await this.getDelivery(organizationId, registrationId, deliveryId);
    if (d.status === 'pending') throw new AppError(409, 'delivery_pending', 'the delivery is still being attempted');
    const now = this.now();
    const next: WebhookDelivery = {
      ...d,
      status: 'pending',
      nextAttemptAt: new Date(now).toISOString(),
      retryUntil: new Date(now + this.opts.retryWindowMs).toISOString(),
      updatedAt: new Date(now).toISOString(),
    };
    if (!(await this.opts.store.saveDelivery(next))) throw notFound('delivery');
    this.opts.onScheduled?.({ organizationId, registrationId });
    return next;
  }
}
