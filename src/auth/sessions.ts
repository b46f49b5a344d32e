import { createHash, randomBytes } from 'node:crypto';
import { AppError, badRequest, conflict } from '../errors.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { isActiveUser, type AuthSession, type Principal, type User, type UserRole } from '../domain/types.js';
import { scopesForRole } from '../domain/scopes.js';
import { hashPassword, randomToken, safeEqual, verifyPassword } from '../domain/secrets.js';
import type { Store } from '../store/index.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from './cookies.js';
import type { FailedAuthThrottle } from './throttle.js';
import { CredentialChangeListeners, type CredentialChangeListener } from '../domain/credential-change.js';

export interface SessionSettings {
  idleMs: number;
  maxAgeMs: number;
  /** Add `Secure` to the cookie (the public URL is https). */
  secureCookie: boolean;
}

/** The signed-in user as the dashboard sees them. */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  organizationId: string;
}

/** A request's resolved session. */
export interface SignedIn {
  principal: Principal;
  session: AuthSession;
  user: SessionUser;
}

/** What sign-in and `GET /v1/auth/session` answer. */
export interface SessionView {
  user: SessionUser;
  csrfToken: string;
  expiresAt: string;
}

/** What opened a long-lived connection (an inbox socket) with a session: the principal, and the session to re-check. */
export interface SessionCredential {
  principal: Principal;
  sessionIdHash: string;
}

/** Inbox tokens open the WebSocket once, within this long. */
export const INBOX_TOKEN_TTL_MS = 60_000;
/** Activity is written back at most this often per session: a write per request would double the load. */
const TOUCH_INTERVAL_MS = 60_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const notSignedIn = () => new AppError(401, 'not_signed_in', 'not signed in, or the session has ended; sign in again');
const invalidCredentials = () => new AppError(401, 'invalid_credentials', 'wrong email or password');

function sessionUser(u: User): SessionUser {
  return { id: u.id, email: u.email, name: u.name, role: u.role, organizationId: u.organizationId };
}

/**
 * Dashboard sign-in: server-side sessions behind an opaque cookie.
 *
 * Guarantees:
 * - A session id is 256 random bits, new at every sign-in (a cookie the
 *   client sent is never adopted; its session is ended); only its SHA-256 is
 *   stored.
 * - Every request reads the session and its user from the store (no cache
 *   on a node), so a logout, a password change, a deactivation or a role
 *   change takes effect on the next request, on every node.
 * - A session ends after `idleMs` without requests and at `maxAgeMs` after
 *   sign-in, whichever comes first.
 * - A wrong email and a wrong password get the same 401, and cost the same
 *   password hash; failures count towards the throttle of the account and of
 *   the client address, checked before the password is.
 * - Inbox tokens are single use, live 60 s, and die with their session.
 * - Once a session is ended (logout, sign-in rotation, password change), the
 *   `onCredentialsChanged` listeners are told whose it was.
 */
export class AuthSessions {
  private readonly signedIn = new WeakMap<Principal, SignedIn>();
  private readonly changes = new CredentialChangeListeners();
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly throttle: FailedAuthThrottle,
    private readonly settings: SessionSettings,
  ) {}

  /** Told after sessions of a user were ended. */
  onCredentialsChanged(listener: CredentialChangeListener): void {
    this.changes.add(listener);
  }

  private nowMs(): number {
    return this.clock.now();
  }

  private evictAt(s: AuthSession): number {
    return Math.min(Date.parse(s.lastSeenAt) + this.settings.idleMs, Date.parse(s.expiresAt));
  }

  /** The cookie a response sets after sign-in. */
  cookieFor(sessionId: string): string {
    return sessionCookie(sessionId, { secure: this.settings.secureCookie, maxAgeSeconds: this.settings.maxAgeMs / 1000 });
  }

  clearedCookie(): string {
    return clearedSessionCookie(this.settings.secureCookie);
  }

  /**
   * Checks email and password and opens a new session. When the email
   * belongs to users of several organizations, the one whose password
   * matches signs in; `organizationId` picks one when several match.
   */
  async login(
    input: { email: string; password: string; organizationId?: string | undefined },
    ctx: { address?: string | undefined; cookieHeader?: string | undefined },
  ): Promise<{ cookie: string; view: SessionView }> {
    const email = input.email.trim().toLowerCase();
    const attempt = { via: 'password' as const, address: ctx.address, account: email };
    await this.throttle.assertAllowed(attempt);
    const candidates = (await this.store.users.findByEmail(email)).filter(
      (u) => isActiveUser(u) && (input.organizationId === undefined || u.organizationId === input.organizationId),
    );
    if (candidates.length === 0) {
      // Same work as for a real account, so timing does not tell which emails exist.
      await verifyPassword(input.password, await (this.dummyHash ??= hashPassword(randomToken(16))));
      await this.throttle.failed(attempt, 'unknown email');
      throw invalidCredentials();
    }
    const matches: User[] = [];
    for (const u of candidates) if (await verifyPassword(input.password, u.passwordHash)) matches.push(u);
    if (matches.length === 0) {
      await this.throttle.failed(attempt, 'wrong password');
      throw invalidCredentials();
    }
    if (matches.length > 1) {
      const orgs = await Promise.all(matches.map(async (u) => ({ id: u.organizationId, name: (await this.store.organizations.get(u.organizationId))?.name ?? null })));
      throw conflict('ambiguous_login', 'this email and password fit users of several organizations; send organizationId to pick one', { organizations: orgs });
    }
    const user = matches[0]!;
    // Rotation: whatever session the browser had is ended, and a new id is drawn.
    const previous = this.idHashOf(ctx.cookieHeader);
    if (previous !== undefined) await this.end(previous);
    const sessionId = randomBytes(32).toString('base64url');
    const now = this.nowMs();
    const session: AuthSession = {
      idHash: sha256(sessionId),
      organizationId: user.organizationId,
      userId: user.id,
      csrfToken: randomToken(32),
      createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.settings.maxAgeMs).toISOString(),
    };
    await this.store.sessions.create(session, this.evictAt(session));
    this.log.info('signed in', { organizationId: user.organizationId, userId: user.id, session: session.idHash.slice(0, 12) });
    return { cookie: this.cookieFor(sessionId), view: { user: sessionUser(user), csrfToken: session.csrfToken, expiresAt: session.expiresAt } };
  }

  /** Ends the session of the cookie, if any. */
  async logout(cookieHeader: string | undefined): Promise<void> {
    const idHash = this.idHashOf(cookieHeader);
    if (idHash !== undefined) await this.end(idHash);
  }

  /** Deletes a session and tells the listeners whose it was. */
  private async end(idHash: string): Promise<void> {
    const session = await this.store.sessions.get(idHash);
    await this.store.sessions.delete(idHash);
    if (session !== null) this.changes.emit({ organizationId: session.organizationId, userId: session.userId });
  }

  private idHashOf(cookieHeader: string | undefined): string | undefined {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    return id !== undefined && SESSION_ID.test(id) ? sha256(id) : undefined;
  }

  /** True when the header carries a session cookie at all (valid or not). */
  hasCookie(cookieHeader: string | undefined): boolean {
    return readCookie(cookieHeader, SESSION_COOKIE) !== undefined;
  }

  /**
   * Resolves the cookie to a live session and its active user; 401
   * `not_signed_in` otherwise. Refused cookies are not counted by the
   * throttle: a session id is 256 random bits (guessing is hopeless), and
   * counting the ended sessions of every tab behind one office address
   * would lock that address out of signing in again.
   */
  async resolve(cookieHeader: string | undefined): Promise<SignedIn> {
    const idHash = this.idHashOf(cookieHeader);
    const session = idHash === undefined ? null : await this.store.sessions.get(idHash);
    const now = this.nowMs();
    if (session === null || now >= this.evictAt(session)) {
      if (session !== null) await this.store.sessions.delete(session.idHash);
      throw notSignedIn();
    }
    const user = await this.store.users.get(session.organizationId, session.userId);
    if (user === null || !isActiveUser(user)) {
      await this.store.sessions.delete(session.idHash);
      throw notSignedIn();
    }
    if (now - Date.parse(session.lastSeenAt) >= TOUCH_INTERVAL_MS) {
      const touched = { ...session, lastSeenAt: new Date(now).toISOString() };
      // Best effort: a failed activity write must not fail the request.
      this.store.sessions.touch(session.idHash, touched.lastSeenAt, this.evictAt(touched)).catch((err: unknown) => this.log.warn('could not record session activity', { err }));
    }
    const principal = sessionPrincipal(user, session);
    const signed = { principal, session, user: sessionUser(user) };
    this.signedIn.set(principal, signed);
    return signed;
  }

  /** The session behind a principal that `resolve` produced; 401 for an API key's principal. */
  sessionOf(principal: Principal): SignedIn {
    const s = this.signedIn.get(principal);
    if (s === undefined) throw notSignedIn();
    return s;
  }

  /** Throws 403 `csrf_failed` unless `token` is the session's synchronizer token. */
  assertCsrf(signed: SignedIn, token: string | undefined): void {
    if (token === undefined || !safeEqual(token, signed.session.csrfToken)) {
      throw new AppError(403, 'csrf_failed', 'send the X-CSRF-Token header with the csrfToken of the session (from sign-in or GET /v1/auth/session)');
    }
  }

  view(signed: SignedIn): SessionView {
    return { user: signed.user, csrfToken: signed.session.csrfToken, expiresAt: signed.session.expiresAt };
  }

  /** For the WebSocket upgrade: the cookie's principal (the caller checks the Origin). */
  async authenticateSessionCookie(cookieHeader: string | undefined): Promise<Principal> {
    return (await this.resolve(cookieHeader)).principal;
  }

  /** As `authenticateSessionCookie`, with the session to re-check later (`principalOfSession`). */
  async cookieCredential(cookieHeader: string | undefined): Promise<SessionCredential> {
    const signed = await this.resolve(cookieHeader);
    return { principal: signed.principal, sessionIdHash: signed.session.idHash };
  }

  /**
   * What a session authenticates as now, read from the store: null once it
   * has ended (logout, expiry, password change or reset) or its user is
   * deactivated. Does not count as activity.
   */
  async principalOfSession(idHash: string): Promise<Principal | null> {
    const session = await this.store.sessions.get(idHash);
    if (session === null || this.nowMs() >= this.evictAt(session)) return null;
    const user = await this.store.users.get(session.organizationId, session.userId);
    if (user === null || !isActiveUser(user)) return null;
    return sessionPrincipal(user, session);
  }

  async issueInboxToken(signed: SignedIn): Promise<{ token: string; expiresAt: string }> {
    const token = randomToken(32);
    await this.store.sessions.putInboxToken(sha256(token), { organizationId: signed.principal.organizationId, userId: signed.principal.userId, sessionIdHash: signed.session.idHash }, INBOX_TOKEN_TTL_MS);
    return { token, expiresAt: new Date(this.nowMs() + INBOX_TOKEN_TTL_MS).toISOString() };
  }

  /** Consumes a single-use inbox token; 401 when unknown, used, expired, or its session has ended. */
  async authenticateInboxToken(token: string | undefined): Promise<Principal> {
    return (await this.inboxTokenCredential(token)).principal;
  }

  /** As `authenticateInboxToken`, with the session to re-check later (`principalOfSession`). */
  async inboxTokenCredential(token: string | undefined): Promise<SessionCredential> {
    const denied = () => new AppError(401, 'unauthorized', 'missing, used or expired inbox token; get a new one from POST /v1/inbox/token');
    if (token === undefined || token.length < 20 || token.length > 100) throw denied();
    const grant = await this.store.sessions.takeInboxToken(sha256(token));
    if (grant === null) {
      await this.throttle.failed({ via: 'inbox_token' }, 'unknown inbox token');
      throw denied();
    }
    const session = await this.store.sessions.get(grant.sessionIdHash);
    if (session === null || this.nowMs() >= this.evictAt(session)) throw denied();
    const user = await this.store.users.get(grant.organizationId, grant.userId);
    if (user === null || !isActiveUser(user)) throw denied();
    return { principal: sessionPrincipal(user, session), sessionIdHash: session.idHash };
  }

  /** Changes the signed-in user's password and ends their other sessions. */
  async changePassword(signed: SignedIn, currentPassword: string, newPassword: string, address?: string): Promise<void> {
    const attempt = { via: 'password' as const, address, account: signed.user.email };
    await this.throttle.assertAllowed(attempt);
    const user = await this.store.users.get(signed.principal.organizationId, signed.principal.userId);
    if (user === null) throw notSignedIn();
    if (!(await verifyPassword(currentPassword, user.passwordHash))) {
      await this.throttle.failed(attempt, 'wrong current password');
      throw badRequest('invalid_current_password', 'the current password is wrong', { field: 'currentPassword' });
    }
    const passwordHash = await hashPassword(newPassword);
    await this.store.users.update(user.organizationId, user.id, (u) => ({ ...u, passwordHash }));
    const ended = await this.store.sessions.deleteForUser(user.organizationId, user.id, signed.session.idHash);
    this.changes.emit({ organizationId: user.organizationId, userId: user.id });
    this.log.info('password changed', { organizationId: user.organizationId, userId: user.id, sessionsEnded: ended });
  }
}

function sessionPrincipal(user: User, session: AuthSession): Principal {
  return { organizationId: user.organizationId, userId: user.id, role: user.role, keyId: `session:${session.idHash.slice(0, 12)}`, scopes: new Set(scopesForRole(user.role)) };
}
