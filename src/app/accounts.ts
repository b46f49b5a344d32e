import { randomUUID } from 'node:crypto';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Clock } from '../clock.js';
import { isActiveUser, type ApiKeyRecord, type Contact, type Organization, type Principal, type User, type UserRole } from '../domain/types.js';
import type { Scope } from '../domain/scopes.js';
import { API_KEY_PATTERN, generateApiKey, hashApiKey, hashPassword } from '../domain/secrets.js';
import { FreshCache, type Store } from '../store/index.js';
import { CredentialChangeListeners, type CredentialChangeListener } from '../domain/credential-change.js';

/** How often `lastUsedAt` is written per key: a write per request would double the load. */
const TOUCH_INTERVAL_MS = 60_000;
/**
 * How long a key found valid (with its active user) is taken from memory: a
 * revocation or a user change made on another node is seen within it.
 */
export const KEY_FRESH_MS = 1_000;

export type PublicUser = Omit<User, 'passwordHash' | 'active' | 'capacity'> & { active: boolean; capacity: number | null };
export type PublicApiKey = Omit<ApiKeyRecord, 'hash'>;

const publicUser = ({ passwordHash: _p, ...u }: User): PublicUser => ({ ...u, active: isActiveUser(u), capacity: u.capacity ?? null });
const publicKey = ({ hash: _h, ...k }: ApiKeyRecord): PublicApiKey => k;

/**
 * Organizations, dashboard users, API keys and contacts, and resolving a key to a Principal.
 *
 * Guarantees:
 * - A revoked key, or a key whose user was deactivated or demoted, stops
 *   authenticating (or acts with the new role) at once on the node that made
 *   the change, and within `KEY_FRESH_MS` (1 s) on every other node: a key
 *   found valid is remembered that long (node-local monotonic time), never
 *   longer.
 * - Unknown, revoked and malformed keys are never remembered: every failed
 *   attempt reaches the store (and the failure throttle), and a new key works
 *   at once.
 * - After a key is revoked or a user deactivated, given another role or a new
 *   password, the `onCredentialsChanged` listeners are told, once the change
 *   is stored (open inbox sockets are closed from there).
 */
export class AccountService {
  private readonly touched = new Map<string, number>();
  /** Keys found valid, by hash: the record and its user, for `KEY_FRESH_MS`. */
  private readonly fresh = new FreshCache<{ rec: ApiKeyRecord; user: User }>(KEY_FRESH_MS, 10_000);
  private readonly changes = new CredentialChangeListeners();
  private readonly capacityListeners: ((organizationId: string) => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Told after a change that can end or narrow a credential of a user is stored. */
  onCredentialsChanged(listener: CredentialChangeListener): void {
    this.changes.add(listener);
  }

  /** Told (on this node) after a user's auto-assignment capacity changed: a raised one may let a waiting conversation go to them. */
  onCapacityChanged(listener: (organizationId: string) => void): void {
    this.capacityListeners.push(listener);
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  async createOrganization(name: string): Promise<Organization> {
    const org = { id: randomUUID(), name, createdAt: this.now() };
    await this.store.organizations.create(org);
    return org;
  }

  listOrganizations(): Promise<Organization[]> {
    return this.store.organizations.list();
  }

  async requireOrganization(id: string): Promise<Organization> {
    const org = await this.store.organizations.get(id);
    if (!org) throw notFound('organization');
    return org;
  }

  async createUser(organizationId: string, input: { email: string; name: string; role: UserRole; password: string }): Promise<PublicUser> {
    await this.requireOrganization(organizationId);
    const user: User = {
      id: randomUUID(),
      organizationId,
      email: input.email.toLowerCase(),
      name: input.name,
      role: input.role,
      passwordHash: await hashPassword(input.password),
      createdAt: this.now(),
    };
    await this.store.users.create(user);
    return publicUser(user);
  }

  async listUsers(organizationId: string): Promise<PublicUser[]> {
    await this.requireOrganization(organizationId);
    return (await this.store.users.list(organizationId)).map(publicUser);
  }

  async getUser(organizationId: string, userId: string): Promise<PublicUser> {
    const user = await this.store.users.get(organizationId, userId);
    if (!user) throw notFound('user');
    return publicUser(user);
  }

  /**
   * Renames, changes the role of, deactivates or reactivates a user, or sets
   * their auto-assignment capacity (null: no limit of their own).
   * Deactivating ends the user's sessions at once and stops their keys from
   * authenticating (keys are checked against their user on every request).
   * `actorUserId`, when given, is the admin making the change: nobody can
   * deactivate or demote themselves (409 `cannot_change_self`), so an
   * organization is never left without the admin who acted.
   */
  async updateUser(
    organizationId: string,
    userId: string,
    changes: { name?: string | undefined; role?: UserRole | undefined; active?: boolean | undefined; capacity?: number | null | undefined },
    actorUserId?: string,
  ): Promise<PublicUser> {
    if (actorUserId === userId && (changes.active === false || (changes.role !== undefined && changes.role !== 'admin'))) {
      throw conflict('cannot_change_self', 'you cannot deactivate or demote yourself; ask another admin');
    }
    const next = await this.store.users.update(organizationId, userId, (u) => ({
      ...u,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.role !== undefined ? { role: changes.role } : {}),
      ...(changes.active !== undefined ? { active: changes.active } : {}),
      ...(changes.capacity !== undefined ? { capacity: changes.capacity } : {}),
    }));
    this.forgetKeysOf((rec) => rec.userId === userId);
    if (!next) throw notFound('user');
    if (!isActiveUser(next)) await this.store.sessions.deleteForUser(organizationId, userId);
    if (changes.role !== undefined || changes.active !== undefined) this.changes.emit({ organizationId, userId });
    if (changes.capacity !== undefined) for (const l of this.capacityListeners) l(organizationId);
    return publicUser(next);
  }

  /** Sets a new password (operator reset) and ends every session of the user. */
  async resetPassword(organizationId: string, userId: string, password: string): Promise<{ sessionsEnded: number }> {
    await this.requireOrganization(organizationId);
    const passwordHash = await hashPassword(password);
    const next = await this.store.users.update(organizationId, userId, (u) => ({ ...u, passwordHash }));
    if (!next) throw notFound('user');
    const sessionsEnded = await this.store.sessions.deleteForUser(organizationId, userId);
    this.changes.emit({ organizationId, userId });
    return { sessionsEnded };
  }

  /** Issues a key; the returned `key` is the only time its text exists outside the caller. */
  async createApiKey(organizationId: string, input: { userId: string; name: string; scopes: Scope[] }): Promise<PublicApiKey & { key: string }> {
    await this.requireOrganization(organizationId);
    const user = await this.store.users.get(organizationId, input.userId);
    if (!user) throw badRequest('unknown_user', 'userId is not a user of this organization', { field: 'userId' });
    const key = generateApiKey();
    const rec: ApiKeyRecord = {
      id: randomUUID(),
      organizationId,
      userId: user.id,
      name: input.name,
      hash: hashApiKey(key),
      prefix: key.slice(0, 10),
      scopes: [...new Set(input.scopes)],
      createdAt: this.now(),
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.store.apiKeys.create(rec);
    return { ...publicKey(rec), key };
  }

  async listApiKeys(organizationId: string): Promise<PublicApiKey[]> {
    await this.requireOrganization(organizationId);
    return (await this.store.apiKeys.list(organizationId)).map(publicKey);
  }

  async revokeApiKey(organizationId: string, keyId: string): Promise<PublicApiKey> {
    const rec = await this.store.apiKeys.revoke(organizationId, keyId, this.now());
    this.forgetKeysOf((k) => k.id === keyId);
    if (!rec) throw notFound('API key');
    this.changes.emit({ organizationId, userId: rec.userId });
    return publicKey(rec);
  }

  async createContact(organizationId: string, input: { audienceExternalId: string; name?: string | undefined }): Promise<Contact> {
    await this.requireOrganization(organizationId);
    return this.store.contacts.upsert({
      id: randomUUID(),
      organizationId,
      audienceExternalId: input.audienceExternalId,
      name: input.name ?? null,
      createdAt: this.now(),
    });
  }

  async listContacts(organizationId: string): Promise<Contact[]> {
    await this.requireOrganization(organizationId);
    return this.store.contacts.list(organizationId);
  }

  /**
   * Resolves the text of an API key to the caller. Unknown, malformed and
   * revoked keys are all the same 401: the answer does not tell which.
   */
  async authenticate(rawKey: string | undefined): Promise<Principal> {
    // Built only when refusing: an Error captures a stack trace, a cost every request would pay.
    const denied = () => new AppError(401, 'unauthorized', 'missing or invalid API key');
    if (rawKey === undefined || !API_KEY_PATTERN.test(rawKey)) throw denied();
    // Lookup is by SHA-256 of the key: the database comparison is on a hash an
    // attacker cannot steer byte by byte, so it leaks nothing useful in timing.
    const hash = hashApiKey(rawKey);
    // Refusals throw inside the read, so only a key found valid (with its active user) is remembered.
    const { rec, user } = await this.fresh.get(hash, async () => {
      const found = await this.readKey(hash);
      if (found === null) throw denied();
      return found;
    });
    this.touch(hash);
    return keyPrincipal(rec, user);
  }

  /**
   * What the key with this hash authenticates as now, read from the store
   * (never from the 1 s memory, so a change made on any node is seen); null
   * when it no longer authenticates. For re-checking a long-lived connection.
   */
  async principalOfKeyHash(hash: string): Promise<Principal | null> {
    const found = await this.readKey(hash);
    return found === null ? null : keyPrincipal(found.rec, found.user);
  }

  private async readKey(hash: string): Promise<{ rec: ApiKeyRecord; user: User } | null> {
    const rec = await this.store.apiKeys.getByHash(hash);
    if (!rec || rec.revokedAt !== null) return null;
    const user = await this.store.users.get(rec.organizationId, rec.userId);
    if (!user || !isActiveUser(user)) return null;
    return { rec, user };
  }

  /** After a change to keys or users through this node: drops what it may have made stale (and reads under way). */
  private forgetKeysOf(stale: (rec: ApiKeyRecord) => boolean): void {
    this.fresh.forget((_hash, e) => stale(e.rec));
  }

  private touch(hash: string): void {
    const now = this.clock.now();
    const last = this.touched.get(hash);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(hash, now);
    if (this.touched.size > 10_000) this.touched.clear();
    // Best effort: a failed lastUsedAt write must not fail the request.
    this.store.apiKeys.touch(hash, new Date(now).toISOString()).catch(() => this.touched.delete(hash));
  }
}

function keyPrincipal(rec: ApiKeyRecord, user: User): Principal {
  return { organizationId: rec.organizationId, userId: user.id, role: user.role, keyId: rec.id, keyName: rec.name, scopes: new Set(rec.scopes) };
}
