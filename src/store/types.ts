import type { ApiKeyRecord, Contact, Organization, Ticket, TicketStatus, User } from '../domain/types.js';

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

export interface ContactRepo {
  /** Creates the contact unless one with the same audienceExternalId exists; returns the stored one. */
  upsert(contact: Contact): Promise<Contact>;
  get(organizationId: string, audienceExternalId: string): Promise<Contact | null>;
  getById(organizationId: string, id: string): Promise<Contact | null>;
  list(organizationId: string): Promise<Contact[]>;
}

export interface TicketQuery {
  organizationId: string;
  status?: TicketStatus;
  audienceId?: string;
  /** When set, only tickets assigned to this user or unassigned (an agent's view). */
  visibleToAgent?: string;
  /** Zero-based offset and page size. */
  offset: number;
  limit: number;
}

export interface TicketPage {
  tickets: Ticket[];
  total: number;
}

/** What `TicketRepo.create` needs; the store assigns the sequence-based `ticketId`. */
export type NewTicket = Omit<Ticket, 'ticketId'>;

export interface TicketRepo {
  /**
   * Stores a new ticket and gives it a `ticketId` unique in its organization,
   * `T-<yymmdd>-<sequence>`. Newest-first order follows the sequence.
   */
  create(ticket: NewTicket): Promise<Ticket>;
  get(organizationId: string, ticketId: string): Promise<Ticket | null>;
  /**
   * Read-modify-write with optimistic concurrency: `change` gets the current
   * ticket and returns the new one (or null to abort); retried when another
   * writer got in between. Returns the stored result, or null if not found / aborted.
   */
  update(organizationId: string, ticketId: string, change: (current: Ticket) => Ticket | null): Promise<Ticket | null>;
  /** Newest first, using indexes (no full scan in the Redis adapter). */
  list(query: TicketQuery): Promise<TicketPage>;
}

export interface MetaRepo {
  get(key: string): Promise<string | null>;
  /** Sets the value only if the key is absent; true when it was set. */
  setIfAbsent(key: string, value: string): Promise<boolean>;
}

export interface Store {
  readonly kind: 'embedded' | 'redis';
  organizations: OrganizationRepo;
  users: UserRepo;
  apiKeys: ApiKeyRepo;
  contacts: ContactRepo;
  tickets: TicketRepo;
  meta: MetaRepo;
  /** True when nothing was ever stored (first start). */
  isEmpty(): Promise<boolean>;
  /** Throws when the backing store is unreachable. */
  ping(): Promise<void>;
  /** Flushes pending writes and releases connections. */
  close(): Promise<void>;
}
