import type { ApiKeyRecord, Contact, ContactChange, ContactIdentity, Organization, Ticket, TicketActivity, TicketOrigin, TicketPriority, TicketStatus, User } from '../../domain/types.js';
import type { DomainEvent } from '../../domain/events.js';
import type { AuthSessionRepo, FailureCounter } from '../auth/port.js';

/**
 * Storage ports. Each has an embedded adapter (`memory.ts`, durable under
 * DATA_DIR) and a Redis adapter (`redis.ts`); `test/store/contract.ts` runs
 * one suite against both. Every method that takes an organization id only
 * ever reads or writes that organization's data.
 */

export interface OrganizationRepo {
  create(org: Organization): Promise<void>;
  get(id: string): Promise<Organization | null>;
  list(): Promise<Organization[]>;
}

export interface UserRepo {
  /** Fails with `conflict` (AppError 409 `email_taken`) when the email is used in the organization. */
  create(user: User): Promise<void>;
  get(organizationId: string, id: string): Promise<User | null>;
  list(organizationId: string): Promise<User[]>;
  /**
   * Read-modify-write of one user (name, role, active, password hash; never
   * the email or ids). Returns the stored result, or null when no such user.
   */
  update(organizationId: string, id: string, change: (current: User) => User): Promise<User | null>;
  /** Every user with this (lower-case) email, in any organization: sign-in knows no organization. */
  findByEmail(email: string): Promise<User[]>;
}

export interface ApiKeyRepo {
  create(key: ApiKeyRecord): Promise<void>;
  /** Looks a key up by the SHA-256 of its full text. */
  getByHash(hash: string): Promise<ApiKeyRecord | null>;
  list(organizationId: string): Promise<ApiKeyRecord[]>;
  /** Sets `revokedAt`; returns the updated record, or null if no such key in the organization. */
  revoke(organizationId: string, id: string, at: string): Promise<ApiKeyRecord | null>;
  touch(hash: string, at: string): Promise<void>;
}

/** How `ContactRepo.identify` placed a person. */
export interface Identified {
  /** The canonical id of the person: what their conversation actor is keyed by. */
  canonical: string;
  /** Ids of the request that already name another person (a link of two known contacts, which is not made). */
  conflicting: string[];
}

export interface ContactRepo {
  /** Creates the contact unless one with the same audienceExternalId exists; returns the stored one. */
  upsert(contact: Contact): Promise<Contact>;
  /** The contact by its canonical id or by any id linked to it. */
  get(organizationId: string, audienceExternalId: string): Promise<Contact | null>;
  /**
   * The canonical id of the person an id names: the id itself when it is
   * canonical or not known at all. One indexed read.
   */
  resolve(organizationId: string, audienceExternalId: string): Promise<string>;
  /**
   * Places a person the network names by several ids at once (their phone
   * form and their BSUID form, most preferred first) and links them, once
   * across nodes: ids not yet known are linked to the person the others
   * name, or, when none is known, to the first id. Linking is atomic: two
   * nodes placing the same person at the same moment agree on one canonical
   * id. When every id is known and agrees, nothing is written (one read).
   */
  identify(organizationId: string, ids: readonly string[]): Promise<Identified>;
  /**
   * Records what the network showed of the contact (phone, BSUID, username)
   * and gives a nameless contact its profile name; writes only what changed.
   * Returns the stored contact, or null if there is none.
   */
  noteIdentity(organizationId: string, audienceExternalId: string, identity: ContactIdentity, name: string | null): Promise<Contact | null>;
  /**
   * Merges the person `loser` names into the one `winner` names: every id
   * linked to the loser is linked to the winner, the loser's own id among
   * them, and the loser's contact is marked `mergedInto` the winner (`get`
   * of any of its ids answers the winner's). Once across nodes; a repeat
   * changes nothing. Returns false when the loser was merged already (or is
   * the winner).
   */
  merge(organizationId: string, winner: string, loser: string): Promise<boolean>;
  /** Every id linked to the contact with this canonical id (itself included once linked). */
  aliasesOf(organizationId: string, canonical: string): Promise<string[]>;
  /**
   * Gives a nameless contact the name the customer uses on the network (its
   * profile name); a name already set (by an operator, or an earlier
   * message) stays. Returns the stored contact, or null if there is none.
   */
  setNameIfMissing(organizationId: string, audienceExternalId: string, name: string): Promise<Contact | null>;
  getById(organizationId: string, id: string): Promise<Contact | null>;
  /**
   * Applies `change` (`changedContact`) to the contact with this id, read and
   * written in one step, so concurrent changes of different attributes both
   * stay. Returns the stored contact, or null if there is none.
   */
  update(organizationId: string, id: string, change: ContactChange): Promise<Contact | null>;
  list(organizationId: string): Promise<Contact[]>;
}

export interface TicketQuery {
  organizationId: string;
  status?: TicketStatus;
  priority?: TicketPriority;
  audienceId?: string;
  /** A user id: only tickets assigned to that user; null: only unassigned tickets. */
  assigneeId?: string | null;
  /** When set, only tickets assigned to this user or unassigned (an agent's view). */
  visibleToAgent?: string;
  /** Words the subject or description has (as the workspace search matches them); no words match nothing. */
  text?: string;
  /** Zero-based offset and page size. */
  offset: number;
  limit: number;
  /** Keyset paging: only tickets older than this position (a page's `next`); the offset is then not used. */
  before?: number;
}

export interface TicketPage {
  tickets: Ticket[];
  /** Every match, or (`totalRelation: 'gte'`) at least this many: a text search stops counting at `TEXT_SEARCH_TOTAL_CAP`. */
  total: number;
  totalRelation: 'eq' | 'gte';
  /** The position after the page's last ticket when the page is full (pass as `before`), else null. */
  next: number | null;
}

/** What `TicketRepo.create` needs; the store assigns the sequence-based `ticketId`. */
export type NewTicket = Omit<Ticket, 'ticketId'>;

/**
 * The event recorded with a ticket change (transactional outbox): the store
 * completes it with the organization and, as `data`, the ticket as stored.
 */
export interface TicketEventStamp {
  id: string;
  type: 'ticket.created' | 'ticket.updated';
  createdAt: string;
}

/** A ticket create tied to an idempotency key (see `TicketRepo.createOnce`). */
export interface TicketIdempotency {
  /** Unique within the organization; the caller scopes it (for example by API key). */
  key: string;
  /** Identifies the request body; a repeat of the key with another fingerprint is refused. */
  fingerprint: string;
  /** How long the key is remembered. */
  ttlMs: number;
}

/** A comment to add to a ticket's activity (the store fills in the ticket and organization). */
export interface NewTicketComment {
  id: string;
  text: string;
  actor: TicketOrigin | null;
  at: string;
}

/** What a comment's `ticket.commented` event carries: the comment and the ticket as it is. */
export interface TicketCommentedData {
  comment: TicketActivity;
  ticket: Ticket;
}

/** One page of a ticket's activity, oldest first; `next` continues after the last entry (null: no more). */
export interface TicketActivityPage {
  entries: TicketActivity[];
  next: number | null;
}

/** `replayed`: the key was used before with the same body, `ticket` is that create's ticket; `reused`: with another body. */
export type CreateOnceResult = { outcome: 'created' | 'replayed'; ticket: Ticket } | { outcome: 'reused' };

export interface TicketRepo {
  /**
   * Stores a new ticket and gives it a `ticketId` unique in its organization,
   * `T-<yymmdd>-<sequence>`. Newest-first order follows the sequence. The
   * event goes into the organization's outbox in the same atomic write, so a
   * stored change always has its event (see `OutboxRepo`). Its `created`
   * activity entry (by the ticket's `createdBy`) is written with it.
   */
  create(ticket: NewTicket, event: TicketEventStamp): Promise<Ticket>;
  /**
   * `create`, once per idempotency key: the key's record (fingerprint and
   * ticketId, expiring after `ttlMs`) is written in the same atomic write as
   * the ticket and its event, so two racing requests with one key create one
   * ticket, on any node. A repeat within the TTL creates nothing: it gets the
   * first create's ticket as stored now (`replayed`) when the fingerprint
   * matches, else `reused`.
   */
  createOnce(ticket: NewTicket, event: TicketEventStamp, idempotency: TicketIdempotency): Promise<CreateOnceResult>;
  get(organizationId: string, ticketId: string): Promise<Ticket | null>;
  /**
   * Read-modify-write with optimistic concurrency: `change` gets the current
   * ticket and returns the new one (or null to abort); retried when another
   * writer got in between. Returns the stored result, or null if not found / aborted.
   * The event is recorded in the outbox atomically with the change (not when aborted),
   * and so is a `changed` activity entry by `actor` listing the fields that
   * differ (none when no field the activity follows changed).
   */
  update(organizationId: string, ticketId: string, change: (current: Ticket) => Ticket | null, event: TicketEventStamp, actor?: TicketOrigin | null): Promise<Ticket | null>;
  /**
   * Adds a comment to the ticket's activity when the ticket exists and
   * `visible` accepts it, with its `ticket.commented` event (`eventId`,
   * data `TicketCommentedData`) in the same atomic write. Null when there is
   * no such ticket or `visible` refused it. A ticket's entries are written one
   * at a time, so their order is the order of `seq`.
   */
  comment(organizationId: string, ticketId: string, comment: NewTicketComment, eventId: string, visible: (t: Ticket) => boolean): Promise<{ ticket: Ticket; entry: TicketActivity } | null>;
  /** The ticket's activity after position `after` (0: from the start), oldest first, at most `limit`. */
  activity(organizationId: string, ticketId: string, after: number, limit: number): Promise<TicketActivityPage>;
  /** Newest first, using indexes (no full scan in the Redis adapter). */
  list(query: TicketQuery): Promise<TicketPage>;
}

/** One outbox entry: the event and the opaque handle that removes it. */
export interface OutboxEntry {
  event: DomainEvent;
  handle: string;
}

/**
 * Events written together with the change that caused them, waiting to be
 * relayed to the event log (`OutboxRelay`). Entries leave only through
 * `remove`, after the log recorded them: at least once, never lost.
 */
export interface OutboxRepo {
  /** Organizations that have entries waiting. */
  pendingOrganizations(): Promise<string[]>;
  /** Up to `limit` of the organization's entries, oldest first. */
  peek(organizationId: string, limit: number): Promise<OutboxEntry[]>;
  remove(organizationId: string, handles: string[]): Promise<void>;
  /**
   * Takes (or extends, when `owner` holds it) the organization's relay lease
   * for `ttlMs`, so two nodes don't relay one organization at once; false
   * when another owner holds it. The lease expires on its own if its node dies.
   */
  claim(organizationId: string, owner: string, ttlMs: number): Promise<boolean>;
  release(organizationId: string, owner: string): Promise<void>;
}

export interface MetaRepo {
  get(key: string): Promise<string | null>;
  /** Sets the value only if the key is absent; true when it was set. */
  setIfAbsent(key: string, value: string): Promise<boolean>;
  /** Sets the value, replacing any earlier one. */
  set(key: string, value: string): Promise<void>;
}

export interface Store {
  readonly kind: 'embedded' | 'postgres' | 'redis';
  organizations: OrganizationRepo;
  users: UserRepo;
  apiKeys: ApiKeyRepo;
  contacts: ContactRepo;
  tickets: TicketRepo;
  outbox: OutboxRepo;
  meta: MetaRepo;
  /** Dashboard sessions and inbox tokens. */
  sessions: AuthSessionRepo;
  /** Failed authentication attempts, for throttling. */
  authFailures: FailureCounter;
  /** True when nothing was ever stored (first start). */
  isEmpty(): Promise<boolean>;
  /** Throws when the backing store is unreachable. */
  ping(): Promise<void>;
  /** Flushes pending writes and releases connections. */
  close(): Promise<void>;
}
