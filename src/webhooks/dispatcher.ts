import { createHash, randomUUID } from 'node:crypto';
import type { DomainEvent, EventLog, EventSubscription } from '../events/index.js';
import { silentLogger, type Logger } from '../log.js';
import type { DeliveryAttempt, LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from '../store/index.js';
import type { WebhookHttpClient } from './http-client.js';
import { judge, nextAttemptAt, retryDelayMs, type RetrySettings } from './retry-policy.js';
import { signRequest } from './signing.js';

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  events: EventLog;
  http: WebhookHttpClient;
  retry: RetrySettings;
  /** Requests in flight at once to one registration. */
  concurrencyPerEndpoint: number;
  /** Registrations this node serves at once. */
  maxActiveEndpoints: number;
  /** Lane lease; renewed while working, so only a dead or stuck node loses it (default 30 s). */
  leaseMs?: number;
  /** How often idle lanes are looked for (default 250 ms). */
  pollMs?: number;
  /** Attempts kept per delivery (default 50). */
  keepAttempts?: number;
  /** Durable consumer name on the event log (default "webhooks"). */
  consumerName?: string;
  nodeId?: string;
  log?: Logger;
  now?: () => number;
  random?: () => number;
  /** Told of every attempt's verdict and every event's fan-out (for metrics). */
  observer?: DispatchObserver;
}

/** What a delivery attempt came to: delivered; to be tried again; failed for good (a 4xx or a disabled registration), out of retries, or 410 Gone (registration disabled). */
export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'gave_up' | 'disabled';

export interface DispatchObserver {
  attempt(outcome: AttemptOutcome, seconds: number): void;
  /** An event reached this node's fan-out `seconds` after it was created. */
  eventLag(seconds: number): void;
}

/** The event types a registration receives. */
export function registrationMatches(reg: WebhookRegistration, event: Pick<DomainEvent, 'type' | 'createdAt'>): boolean {
  if (reg.status !== 'active') return false;
  if (!reg.events.includes('*') && !reg.events.includes(event.type)) return false;
  // Only events from (about) the registration on: a little slack for clocks of different nodes.
  return Date.parse(event.createdAt) >= Date.parse(reg.createdAt) - 2000;
}

/** The request body: `{id, type, createdAt, organizationId, data}`. */
export function webhookBody(event: DomainEvent): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, organizationId: event.organizationId, data: event.data });
}

/** Stable per (event, registration): fanning one event out twice stores one delivery. */
export function deliveryId(eventId: string, registrationId: string): string {
  const h = createHash('sha256').update(`${eventId}\n${registrationId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The secrets that sign a request now: current first, then a rotated-out one still in its grace period. */
export function signingSecrets(reg: WebhookRegistration, now: number): string[] {
  const out = [reg.secret];
  if (reg.previousSecret !== null && Date.parse(reg.previousSecret.expiresAt) > now) out.push(reg.previousSecret.secret);
  return out;
}

/**
 * Delivers events to webhook registrations, at least once.
 *
 * Two stages, both durable:
 * 1. Fan-out: a durable consumer of the event log turns each event into one
 *    delivery per matching registration (idempotent ids) and only then
 *    acknowledges the event. A crash before the ack redelivers the event.
 * 2. Lanes: each registration's deliveries form a lane (its own queue). A
 *    node leases a lane, runs up to `concurrencyPerEndpoint` requests on it
 *    and records every attempt; many lanes run side by side, so one slow or
 *    dead receiver only ever occupies its own lane. A node that dies stops
 *    renewing its leases and another node picks the lanes up; the delivery
 *    that was in flight is attempted again.
 */
export class WebhookDispatcher {
  private readonly store: WebhookStore;
  private readonly log: Logger;
  private readonly owner: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly activeLanes = new Map<string, { wake: () => void; startedAt: number }>();
  private readonly aborts = new Set<AbortController>();
  private readonly releasing = new Set<Promise<void>>();
  private subscription: EventSubscription | null = null;
  private stopping = false;
  private loopDone: Promise<void> = Promise.resolve();
  private kickLoop: (() => void) | null = null;
  private kicked = false;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.store = opts.store;
    this.log = opts.log ?? silentLogger;
    this.owner = `${opts.nodeId ?? 'node'}:${randomUUID()}`;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.pollMs = opts.pollMs ?? 250;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  async start(): Promise<void> {
    this.subscription = await this.opts.events.consume(this.opts.consumerName ?? 'webhooks', (e) => this.fanOut(e), { concurrency: 32 });
    this.loopDone = this.schedulerLoop();
  }

  /**
   * Stops taking work, lets requests in flight finish for up to `graceMs`,
   * then aborts the rest (they stay due and are attempted again by whoever
   * takes the lane next) and releases every lane.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.kick();
    for (const l of this.activeLanes.values()) l.wake();
    await this.subscription?.stop();
    const abortTimer = setTimeout(() => {
      for (const a of this.aborts) a.abort();
    }, graceMs);
    await this.loopDone;
    while (this.activeLanes.size > 0) await new Promise((r) => setTimeout(r, 10));
    await Promise.all([...this.releasing]);
    clearTimeout(abortTimer);
  }

  /** Look for due lanes now (after this node scheduled deliveries). */
  kick(): void {
    this.kicked = true;
    const k = this.kickLoop;
    this.kickLoop = null;
    k?.();
  }

  /** Tells a lane this node is working that it has new due deliveries. */
  private nudge(lane: LaneRef): void {
    this.activeLanes.get(laneKey(lane))?.wake();
  }

  /** Stage 1: one event to deliveries. Rejecting makes the log redeliver the event. */
  async fanOut(event: DomainEvent): Promise<void> {
    this.opts.observer?.eventLag(Math.max(0, this.now() - Date.parse(event.createdAt)) / 1000);
    const regs = await this.store.fanOutRegistrations(event.organizationId);
    const matching = regs.filter((r) => registrationMatches(r, event));
    if (matching.length === 0) return;
    const body = webhookBody(event);
    const now = this.now();
    const at = new Date(now).toISOString();
    const until = new Date(now + this.opts.retry.windowMs).toISOString();
    const deliveries: WebhookDelivery[] = matching.map((r) => ({
      id: deliveryId(event.id, r.id),
      organizationId: event.organizationId,
      registrationId: r.id,
      eventId: event.id,
      eventType: event.type,
      payload: body,
      status: 'pending',
      attempts: [],
      attemptCount: 0,
      nextAttemptAt: at,
      retryUntil: until,
      createdAt: at,
      updatedAt: at,
    }));
    await this.store.enqueueDeliveries(deliveries);
    for (const r of matching) this.nudge({ organizationId: r.organizationId, registrationId: r.id });
    this.kick();
  }

  /** After a resend or other rescheduling done in this process. */
  scheduled(lane: LaneRef): void {
    this.nudge(lane);
    this.kick();
  }

  private async schedulerLoop(): Promise<void> {
    while (!this.stopping) {
      try {
        const free = this.opts.maxActiveEndpoints - this.activeLanes.size;
        if (free > 0) {
          const lanes = await this.store.claimLanes(this.now(), free, this.owner, this.leaseMs);
          for (const lane of lanes) this.startLane(lane);
        }
      } catch (err) {
        this.log.warn('webhook scheduler: claiming lanes failed', { err });
      }
      if (this.stopping) break;
      if (this.kicked) {
        this.kicked = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => { this.kickLoop = null; resolve(); }, this.pollMs);
        this.kickLoop = () => { clearTimeout(t); resolve(); };
      });
      this.kicked = false;
    }
  }

  private startLane(lane: LaneRef): void {
    const key = laneKey(lane);
    if (this.activeLanes.has(key)) return;
    const state = { wake: () => {}, startedAt: this.now() };
    this.activeLanes.set(key, state);
    this.runLane(lane, state)
      .catch((err: unknown) => this.log.error('webhook lane failed', { ...lane, err }))
      .finally(async () => {
        // Forget the runner before dropping the lease: once the lease is
        // gone this node may claim the lane again and must start a runner.
        this.activeLanes.delete(key);
        const release = this.store.releaseLane(lane, this.owner).catch((err: unknown) => {
          this.log.warn('webhook lane: release failed (the lease will lapse)', { ...lane, err });
        });
        this.releasing.add(release);
        await release;
        this.releasing.delete(release);
        this.kick();
      });
  }

  private async runLane(lane: LaneRef, state: { wake: () => void; startedAt: number }): Promise<void> {
    const limit = this.opts.concurrencyPerEndpoint;
    const inFlight = new Set<string>();
    let lost = false;
    const renew = setInterval(() => {
      this.store.renewLane(lane, this.owner, this.leaseMs).then(
        (ok) => { if (!ok) lost = true; },
        (err: unknown) => this.log.warn('webhook lane: renewing lease failed', { ...lane, err }),
      );
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    let signal: Promise<void> = Promise.resolve();
    const rearm = () => {
      signal = new Promise<void>((r) => {
        state.wake = r;
      });
    };
    rearm();
    try {
      let reg = await this.store.getRegistration(lane.organizationId, lane.registrationId);
      let regLoadedAt = this.now();
      while (reg !== null && !lost && !this.stopping) {
        if (this.now() - regLoadedAt > 1000) {
          // Pick up secret rotations, event changes and disabling.
          reg = await this.store.getRegistration(lane.organizationId, lane.registrationId);
          regLoadedAt = this.now();
          if (reg === null) break;
        }
        const free = limit - inFlight.size;
        let started = 0;
        if (free > 0) {
          const ids = await this.store.dueDeliveries(lane, this.now(), limit + inFlight.size);
          for (const id of ids) {
            if (started >= free) break;
            if (inFlight.has(id)) continue;
            inFlight.add(id);
            started++;
            const current = reg;
            void this.attempt(current, id)
              .catch((err: unknown) => this.log.error('webhook attempt failed unexpectedly', { deliveryId: id, err }))
              .finally(() => {
                inFlight.delete(id);
                state.wake();
              });
          }
        }
        if (inFlight.size === 0 && started === 0) break;
        // Give the lane up after a while when others wait for a slot, so a
        // busy receiver cannot keep the node to itself.
        if (this.activeLanes.size >= this.opts.maxActiveEndpoints && this.now() - state.startedAt > 10_000) break;
        await Promise.race([signal, new Promise((r) => setTimeout(r, this.pollMs))]);
        rearm();
      }
      while (inFlight.size > 0) {
        await Promise.race([signal, new Promise((r) => setTimeout(r, 50))]);
        rearm();
      }
    } finally {
      clearInterval(renew);
    }
  }

  /** One HTTP attempt of one delivery, and its record. */
  private async attempt(reg: WebhookRegistration, id: string): Promise<void> {
    const d = await this.store.getDelivery(reg.organizationId, id);
    if (d === null || d.status !== 'pending') return;
    const startedAt = this.now();
    if (d.nextAttemptAt !== null && Date.parse(d.nextAttemptAt) > startedAt) return;
    if (reg.status !== 'active') {
      await this.finish(d, startedAt, { at: new Date(startedAt).toISOString(), status: null, latencyMs: 0, error: `registration disabled: ${reg.disabledReason ?? 'by its owner'}` }, 'failed');
      this.opts.observer?.attempt('failed', 0);
      return;
    }
    const headers = signRequest(signingSecrets(reg, startedAt), d.eventId, Math.floor(startedAt / 1000), d.payload);
    const abort = new AbortController();
    this.aborts.add(abort);
    let outcome;
    try {
      outcome = await this.opts.http.post(reg.url, d.payload, { ...headers }, abort.signal);
    } finally {
      this.aborts.delete(abort);
    }
    // Shutting down mid-request: no verdict; the delivery stays due for the next owner.
    if (abort.signal.aborted) return;
    const verdict = judge(outcome);
    const record: DeliveryAttempt = {
      at: new Date(startedAt).toISOString(),
      status: outcome.status,
      latencyMs: outcome.latencyMs,
      error: verdict.kind === 'succeeded' ? null : verdict.reason,
    };
    const now = this.now();
    const observe = (o: AttemptOutcome) => this.opts.observer?.attempt(o, outcome.latencyMs / 1000);
    switch (verdict.kind) {
      case 'succeeded':
        await this.finish(d, now, record, 'succeeded');
        observe('succeeded');
        return;
      case 'failed':
        await this.finish(d, now, record, 'failed');
        observe('failed');
        return;
      case 'disable': {
        await this.finish(d, now, record, 'failed');
        observe('disabled');
        const cur = await this.store.getRegistration(reg.organizationId, reg.id);
        if (cur !== null && cur.status === 'active') {
          await this.store.updateRegistration({ ...cur, status: 'disabled', disabledReason: verdict.reason, updatedAt: new Date(now).toISOString() });
          this.log.info('webhook registration disabled', { organizationId: reg.organizationId, registrationId: reg.id, reason: verdict.reason });
        }
        return;
      }
      case 'retry': {
        const delay = retryDelayMs(d.attemptCount + 1, this.opts.retry, verdict.retryAfterMs, this.random);
        const next = nextAttemptAt(now, delay, Date.parse(d.retryUntil));
        if (next === null) {
          await this.finish(d, now, { ...record, error: `${record.error ?? 'failed'}; gave up after ${d.attemptCount + 1} attempts` }, 'failed');
          observe('gave_up');
          return;
        }
        await this.store.saveDelivery({
          ...d,
          attempts: [...d.attempts, record].slice(-(this.opts.keepAttempts ?? 50)),
          attemptCount: d.attemptCount + 1,
          nextAttemptAt: new Date(next).toISOString(),
          updatedAt: new Date(now).toISOString(),
        });
        observe('retry');
      }
    }
  }

  private async finish(d: WebhookDelivery, now: number, record: DeliveryAttempt, status: 'succeeded' | 'failed'): Promise<void> {
    await this.store.saveDelivery({
      ...d,
      status,
      attempts: [...d.attempts, record].slice(-(this.opts.keepAttempts ?? 50)),
      attemptCount: d.attemptCount + 1,
      nextAttemptAt: null,
      updatedAt: new Date(now).toISOString(),
    });
  }
}

function laneKey(l: LaneRef): string {
  return `${l.organizationId}/${l.registrationId}`;
}
