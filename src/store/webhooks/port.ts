/**
 * Storage port for webhook registrations, their deliveries and the delivery
 * schedule. Two adapters: `sqlite.ts` (the node's SQLite database) and
 * `postgres.ts` (PostgreSQL, with the schedule in Redis);
 * `test/webhooks/store-contract.ts` runs one suite against both. Every method taking an organization id only touches that
 * organization's data.
 */

export type WebhookRegistrationStatus = 'active' | 'disabled';

export interface WebhookRegistration {
  id: string;
  organizationId: string;
  url: string;
  /** Event names, or `*` for every event. */
  events: string[];
  /** `whsec_` + base64 of 24 random bytes; shown to the user only at creation and rotation. */
  secret: string;
  /** After a rotation the old secret also signs (Standard Webhooks header) until `expiresAt`. */
  previousSecret: { secret: string; expiresAt: string } | null;
  status: WebhookRegistrationStatus;
  /** Why the service disabled it (for example the receiver answered 410). */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** The outcome of one HTTP attempt, as recorded and shown through the API. */
export interface DeliveryAttempt {
  at: string;
  /** HTTP status, or null when no response arrived (timeout, connection error, refused address). */
  status: number | null;
  latencyMs: number;
  /** Why the attempt did not succeed, in words; null on success. */
  error: string | null;
}

/** One event on its way to one registration. */
export interface WebhookDelivery {
  /** Derived from event id and registration id, so fanning an event out twice stores it once. */
  id: string;
  organizationId: string;
  registrationId: string;
  eventId: string;
  eventType: string;
  /** The exact request body, the same bytes on every attempt. */
  payload: string;
  status: DeliveryStatus;
  /** Most recent last; only the latest few dozen are kept. */
  attempts: DeliveryAttempt[];
  attemptCount: number;
  /** When pending: when the next attempt is due. */
  nextAttemptAt: string | null;
  /** Retries are scheduled until this time (about three days after the first attempt, or after a resend). */
  retryUntil: string;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  offset: number;
  limit: number;
}

/** A registration's delivery queue, as the scheduler sees it. */
export interface LaneRef {
  organizationId: string;
  registrationId: string;
}

export interface WebhookStore {
  /** Fails with AppError 409 `webhook_url_taken` when the organization already registered the URL. */
  createRegistration(reg: WebhookRegistration): Promise<void>;
  getRegistration(organizationId: string, id: string): Promise<WebhookRegistration | null>;
  /** Oldest first. */
  listRegistrations(organizationId: string): Promise<WebhookRegistration[]>;
  /**
   * The registrations an event of the organization is fanned out to, as
   * `listRegistrations` but possibly remembered: clustered, a registration
   * created, changed or deleted through another node shows within a second
   * (one changed through this store at once). Signing secrets may be sealed:
   * fan-out needs none.
   */
  fanOutRegistrations(organizationId: string): Promise<WebhookRegistration[]>;
  /** Replaces a registration (its URL never changes); false when it no longer exists. */
  updateRegistration(reg: WebhookRegistration): Promise<boolean>;
  /** Deletes the registration with all its deliveries and its queue; false when not found. */
  deleteRegistration(organizationId: string, id: string): Promise<boolean>;

  /**
   * Stores new pending deliveries and schedules them; a delivery whose id is
   * already stored is left as it is (fan-out is idempotent). Resolves once
   * durable.
   */
  enqueueDeliveries(deliveries: WebhookDelivery[]): Promise<void>;
  getDelivery(organizationId: string, id: string): Promise<WebhookDelivery | null>;
  /** Newest first. */
  listDeliveries(organizationId: string, registrationId: string, query: DeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; total: number }>;
  /**
   * Stores a delivery after an attempt or a resend: a pending one is
   * (re)scheduled at `nextAttemptAt`, a finished one leaves the schedule.
   * False when the delivery no longer exists (its registration was deleted).
   */
  saveDelivery(delivery: WebhookDelivery): Promise<boolean>;

  /** Ids of the lane's deliveries due at `now` (ms), earliest first. */
  dueDeliveries(lane: LaneRef, now: number, limit: number): Promise<string[]>;
  /**
   * Leases up to `max` lanes that have deliveries due at `now` and that no
   * other owner holds. A lease not renewed within `leaseMs` lapses, so a dead
   * node's lanes pass to another.
   */
  claimLanes(now: number, max: number, owner: string, leaseMs: number): Promise<LaneRef[]>;
  /** Extends the lease; false when `owner` no longer holds it (stop working the lane). */
  renewLane(lane: LaneRef, owner: string, leaseMs: number): Promise<boolean>;
  /** Gives the lane up, rescheduling it at its next due delivery. */
  releaseLane(lane: LaneRef, owner: string): Promise<void>;
}
