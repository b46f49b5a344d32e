import { contactAddressOf, isBusinessScopedUserId, PHONE_DIGITS_PATTERN } from './contact-id.js';
export const TICKET_STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;
export const TICKET_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export const USER_ROLES = ['admin', 'agent'] as const;

export type TicketStatus = (typeof TICKET_STATUSES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type UserRole = (typeof USER_ROLES)[number];

/**
 * A contact's open ticket among its tickets listed newest first: the newest
 * neither resolved nor closed. Its priority is the priority of the contact's
 * conversation (what a rule's `set_priority` sets, what response targets by
 * priority read).
 */
export function openTicketOf<T extends { status: TicketStatus }>(newestFirst: T[]): T | undefined {
  return newestFirst.find((t) => t.status === 'open' || t.status === 'in_progress');
}

export interface Organization {
  id: string;
  name: string;
  createdAt: string;
}

export interface User {
  id: string;
  organizationId: string;
  email: string;
  name: string;
  role: UserRole;
  /** scrypt: `scrypt$N$r$p$salt$hash`, base64url parts. */
  passwordHash: string;
  createdAt: string;
  /** False once deactivated: no sign-in, no session, no key of theirs authenticates. Absent (older records) means active. */
  active?: boolean;
  /**
   * The most open conversations auto-assignment gives this agent (with the
   * channel's or team's capacity, the smaller applies). Absent (older
   * records) or null: no limit of their own.
   */
  capacity?: number | null;
}

/** Absent `active` (records from before deactivation existed) means active. */
export function isActiveUser(user: Pick<User, 'active'>): boolean {
  return user.active !== false;
}

/**
 * A signed-in dashboard session, stored server-side. The cookie carries a
 * random id; only its SHA-256 (`idHash`) is stored, so a leaked store does
 * not hand out sessions.
 */
export interface AuthSession {
  idHash: string;
  organizationId: string;
  userId: string;
  /** The synchronizer token every unsafe request made with the cookie must echo in `X-CSRF-Token`. */
  csrfToken: string;
  createdAt: string;
  /** Last request seen (written at most about once a minute); the idle timeout counts from here. */
  lastSeenAt: string;
  /** The absolute end: no activity extends a session past it. */
  expiresAt: string;
}

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  /** The dashboard user who created the key; the key sees what they see. */
  userId: string;
  name: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface Contact {
  id: string;
  organizationId: string;
  /**
   * The canonical id: `<phone>:<phoneNumberId>` on the chat network, or
   * `<BSUID>:<phoneNumberId>` for a customer first seen without a phone
   * number. Never changes; ids linked to it later are aliases.
   */
  audienceExternalId: string;
  name: string | null;
  /** Who the customer is on the chat network, as far as it has shown (each absent until learned). */
  phone?: string;
  userId?: string;
  parentUserId?: string;
  username?: string;
  /** Merged into the contact with this canonical id: another id of the same person, found later. */
  mergedInto?: string;
  /** Custom key/value attributes the organization keeps about the contact (absent on contacts that never had any). */
  attributes?: Record<string, string>;
  createdAt: string;
}

/** What the chat network showed of a customer: each part optional. */
export interface ContactIdentity {
  phone?: string;
  userId?: string;
  parentUserId?: string;
  username?: string;
}

/**
 * A contact's identifiers as responses name them: the phone (null when the
 * customer hides it), BSUID, parent BSUID and username. A contact from
 * before these were kept is named by its id alone, whose first half is its
 * phone number.
 */
export function contactIdentityView(c: Pick<Contact, 'audienceExternalId' | 'phone' | 'userId' | 'parentUserId' | 'username'>): { phone: string | null; userId: string | null; parentUserId: string | null; username: string | null } {
  const head = contactAddressOf(c.audienceExternalId);
  return {
    phone: c.phone ?? (PHONE_DIGITS_PATTERN.test(head) ? head : null),
    userId: c.userId ?? (isBusinessScopedUserId(head) ? head : null),
    parentUserId: c.parentUserId ?? null,
    username: c.username ?? null,
  };
}

/** The contact with what the network now shows of it: each part given replaces the one kept. */
export function identifiedContact(c: Contact, identity: ContactIdentity): Contact {
  const next: Contact = { ...c };
  if (identity.phone !== undefined) next.phone = identity.phone;
  if (identity.userId !== undefined) next.userId = identity.userId;
  if (identity.parentUserId !== undefined) next.parentUserId = identity.parentUserId;
  if (identity.username !== undefined) next.username = identity.username;
  return next;
}

/** A change of a contact: a name (null clears it) and attributes merged in (a null value removes the key). */
export interface ContactChange {
  name?: string | null;
  attributes?: Record<string, string | null>;
}

/** The contact after `change`: attributes merged key by key. */
export function changedContact(c: Contact, change: ContactChange): Contact {
  const next: Contact = { ...c };
  if (change.name !== undefined) next.name = change.name;
  if (change.attributes !== undefined) {
    const attributes: Record<string, string> = { ...c.attributes };
    for (const [k, v] of Object.entries(change.attributes)) {
      if (v === null) delete attributes[k];
      else attributes[k] = v;
    }
    next.attributes = attributes;
  }
  return next;
}

/** Who or what made a ticket: an API key, a dashboard user (session) or an MCP tool call (with its key). */
export interface TicketOrigin {
  kind: 'api_key' | 'session' | 'mcp';
  userId: string;
  /** The API key used (null for a dashboard session). */
  keyId: string | null;
  keyName: string | null;
}

export interface Ticket {
  _id: string;
  ticketId: string;
  title: string;
  description: string;
  status: TicketStatus;
  priority: TicketPriority;
  assigneeId: string | null;
  audienceId: string | null;
  /** The linked contact's `<phone>:<phone number id>`, the id conversation tools and sends take. */
  audienceExternalId: string | null;
  organizationId: string;
  resolutionDate: string | null;
  /** Null on tickets stored before origins were recorded. */
  createdBy: TicketOrigin | null;
  createdAt: string;
  updatedAt: string;
}

/** A ticket field whose changes the ticket's activity records (`title` is the API's `subject`). */
export const TICKET_ACTIVITY_FIELDS = ['subject', 'description', 'status', 'priority', 'assigneeId', 'resolutionDate'] as const;
export type TicketActivityField = (typeof TICKET_ACTIVITY_FIELDS)[number];

export interface TicketFieldChange {
  field: TicketActivityField;
  from: string | null;
  to: string | null;
}

/**
 * One entry of a ticket's activity, written in the same atomic write as the
 * change it records: its creation, a change of fields, or an agent's
 * comment. `actor` is who did it (null: the service itself, or a ticket
 * imported without one).
 */
export interface TicketActivity {
  id: string;
  ticketId: string;
  organizationId: string;
  kind: 'created' | 'changed' | 'comment';
  actor: TicketOrigin | null;
  at: string;
  /** `changed`: each field that changed, from and to. */
  changes?: TicketFieldChange[];
  /** `comment`: what the agent wrote. */
  text?: string;
}

/** Who is calling: resolved from an API key (`keyId` is the key's id) or a dashboard session (`keyId` is `session:<hash prefix>`). */
export interface Principal {
  organizationId: string;
  userId: string;
  role: UserRole;
  keyId: string;
  /** The API key's name, when the caller used one. */
  keyName?: string;
  scopes: ReadonlySet<string>;
}
