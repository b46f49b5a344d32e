import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { AppError, isAppError } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { EventFeed } from '../events/types.js';
import { requireScope } from '../app/principal.js';
import { InboxFanout } from './fanout.js';
import { InboxConnection, type ConnectionLimits } from './connection.js';
import { CommandRunner, type CommandDeps } from './commands.js';
import { PresenceBoard, type EphemeralBus } from './ephemeral.js';
import { PRESENCE_RENEW_MS } from './presence.js';
import type { PresenceChoice } from '../store/presence/port.js';
import { CLOSE } from './protocol.js';
import type { CredentialNotices } from './credential-notices.js';
import type { CredentialChange } from '../domain/credential-change.js';
import { refuseUpgrade, upgradeUrl } from '../http/upgrades.js';

/** Who opened a socket, and how to ask what the same credential (session or API key) authenticates as later. */
export interface SocketCredential {
  principal: Principal;
  /** Read from the store, never a cache; null once the credential no longer authenticates. */
  current(): Promise<Principal | null>;
}

/** How a socket's caller is identified before the upgrade; each throws AppError 401 when the credential is bad. */
export interface InboxAuthenticators {
  apiKey(key: string, address?: string): Promise<SocketCredential>;
  /** A short-lived inbox token (`?token=`), from a dashboard session: the socket lives by that session. */
  inboxToken?(token: string): Promise<SocketCredential>;
  /** The dashboard's session cookie, on same-origin upgrades only. */
  sessionCookie?(cookieHeader: string): Promise<SocketCredential>;
}

export interface InboxServerOptions extends Omit<CommandDeps, 'presence'> {
  feed: EventFeed;
  auth: InboxAuthenticators;
  /** Origins a cookie-authenticated upgrade may come from (besides the request's own host). */
  allowedOrigins: string[];
  heartbeatMs: number;
  limits: ConnectionLimits;
  bus: EphemeralBus;
  /** "A user's credentials changed", from every node. */
  notices: CredentialNotices;
  /** How often every socket's credential is read again regardless of notices (a lost notice, a session that timed out). */
  recheckMs: number;
}

export const INBOX_PATH = '/ws';

/**
 * The live inbox endpoint: WebSocket upgrades at `/ws` on the REST listener.
 *
 * Guarantees:
 * - A socket opens only for an authenticated caller with `inbox:read`;
 *   anything else is answered as HTTP (401/403 with the error shape) before
 *   any socket exists.
 * - Dead connections are found by heartbeat: a socket that did not answer
 *   the previous ping is terminated at the next one, so within two
 *   heartbeat intervals.
 * - `close()` closes every socket with 1012 (service restart) so clients
 *   reconnect elsewhere and resume from their last seq.
 * - A socket lives only as long as its credential: when a user's
 *   credentials change on any node (sign-out, password change or reset,
 *   revoked key, deactivation, role change), a notice reaches every node,
 *   which reads the credentials of that user's sockets again and closes
 *   those that ended (4001) or narrowed (4003), within a second. Without a
 *   notice (lost, or a session that timed out) every socket is re-checked
 *   each `recheckMs`; and every command is checked on receipt (see
 *   `InboxConnection`).
 */
export class InboxServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false, clientTracking: false });
  private readonly connections = new Set<InboxConnection>();
  private readonly fanout: InboxFanout;
  private readonly presence: PresenceBoard;
  private readonly commands: CommandRunner;
  private heartbeat: NodeJS.Timeout | null = null;
  private recheckTimer: NodeJS.Timeout | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** Notices heard so far: an upgrade that heard one while it authenticated re-checks its socket once open. */
  private noticesHeard = 0;

  constructor(private readonly o: InboxServerOptions) {
    this.fanout = new InboxFanout(o.feed, o.log);
    this.presence = new PresenceBoard(o.bus, (org, frame) => {
      for (const c of this.connections) if (c.organizationId === org) c.ephemeral(frame);
    });
    this.commands = new CommandRunner({ ...o, presence: this.presence });
  }

  async start(server: Server): Promise<void> {
    await this.fanout.start();
    this.presence.start();
    // This node's leases on its connected users, renewed before they lapse (a dead node's lapse by themselves).
    this.leaseTimer = setInterval(() => {
      for (const u of this.presence.localUsers()) void this.o.presenceService.attach(u.organizationId, u.userId, this.presence.node);
    }, PRESENCE_RENEW_MS);
    this.leaseTimer.unref();
    server.on('upgrade', (req, socket, head) => {
      const url = upgradeUrl(req);
      if (url === null || url.pathname !== INBOX_PATH) return;
      void this.upgrade(req, url, socket, head);
    });
    this.heartbeat = setInterval(() => {
      for (const c of this.connections) {
        if (!c.alive) {
          c.socket.terminate();
          continue;
        }
        c.alive = false;
        c.socket.ping();
      }
    }, this.o.heartbeatMs);
    this.heartbeat.unref();
    this.o.notices.subscribe((c) => this.credentialsChanged(c));
    this.recheckTimer = setInterval(() => {
      for (const c of this.connections) void c.recheck();
    }, this.o.recheckMs);
    this.recheckTimer.unref();
  }

  /** Re-reads the credentials of the user's sockets on this node; closes those that no longer carry them. */
  private credentialsChanged(change: CredentialChange): void {
    this.noticesHeard++;
    for (const c of this.connections) {
      if (c.organizationId === change.organizationId && c.principal.userId === change.userId) void c.recheck();
    }
  }

  /** Sockets held, and their unsent bytes: what the inbox costs this node now. */
  stats(): { sockets: number; bufferedBytes: number } {
    let bufferedBytes = 0;
    for (const c of this.connections) bufferedBytes += c.socket.bufferedAmount;
    return { sockets: this.connections.size, bufferedBytes };
  }

  private async upgrade(req: IncomingMessage, url: URL, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const noticesBefore = this.noticesHeard;
    let credential: SocketCredential;
    let choice: PresenceChoice;
    try {
      if (this.closing) throw new AppError(503, 'shutting_down', 'this node is stopping; connect to another');
      const authenticated = await this.authenticate(req, url);
      // The store's word, not a node's short-lived memory of the key: a socket reopened right after a
      // change on another node must not start with what the change took away.
      const current = await authenticated.current();
      if (current === null) throw new AppError(401, 'unauthorized', 'the session or API key no longer authenticates');
      credential = { principal: current, current: authenticated.current };
      requireScope(credential.principal, 'inbox:read');
      choice = await this.o.presenceService.choiceOf(current.organizationId, current.userId);
    } catch (err) {
      const e = isAppError(err) ? err : new AppError(500, 'internal_error', 'the upgrade failed');
      if (!isAppError(err)) this.o.log.error('inbox upgrade failed', { err });
      return refuseUpgrade(socket, e, e.status === 401 ? ['WWW-Authenticate: Bearer realm="switchboard"'] : []);
    }
    const sinceText = url.searchParams.get('since');
    const since = sinceText === null ? undefined : Number(sinceText);
    if (since !== undefined && (!Number.isSafeInteger(since) || since < 0)) {
      return refuseUpgrade(socket, new AppError(400, 'validation_failed', 'since must be a whole number: the last seq the client received'));
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = this.open(ws, credential, since, choice);
      // A change announced while this caller was authenticated may predate what the authentication read.
      if (this.noticesHeard !== noticesBefore) void conn.recheck();
    });
  }

  private open(ws: WebSocket, credential: SocketCredential, since: number | undefined, choice: PresenceChoice): InboxConnection {
    const principal = credential.principal;
    const org = principal.organizationId;
    const conn: InboxConnection = new InboxConnection(ws, principal, {
      feed: this.o.feed,
      runCommand: (p, cmd) => this.commands.run(p, cmd),
      currentPrincipal: () => credential.current(),
      limits: this.o.limits,
      log: this.o.log,
      onClose: () => {
        this.connections.delete(conn);
        this.fanout.remove(conn);
        this.presence.disconnected(org, principal.userId);
        if (!this.presence.holds(org, principal.userId)) void this.o.presenceService.detach(org, principal.userId, this.presence.node);
      },
    });
    this.connections.add(conn);
    this.fanout.add(conn);
    const position = this.fanout.position;
    const welcome = { type: 'welcome', organizationId: org, user: { id: principal.userId, role: principal.role }, seq: position, heartbeatSeconds: Math.round(this.o.heartbeatMs / 1000) };
    // `start` sends the welcome before it awaits anything: it is the first frame, before any presence.
    const started = conn.start(welcome, since, position);
    this.presence.connected(org, principal.userId, choice);
    void this.o.presenceService.attach(org, principal.userId, this.presence.node);
    void started.then(() => {
      for (const p of this.presence.snapshot(org)) if (p.userId !== principal.userId) conn.ephemeral({ type: 'presence', userId: p.userId, status: p.status });
    });
    return conn;
  }

  private async authenticate(req: IncomingMessage, url: URL): Promise<SocketCredential> {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer !== undefined) return this.o.auth.apiKey(bearer, req.socket.remoteAddress);
    const token = url.searchParams.get('token');
    if (token !== null) {
      if (this.o.auth.inboxToken === undefined) throw new AppError(401, 'unauthorized', 'inbox tokens are not available on this node');
      return this.o.auth.inboxToken(token);
    }
    const cookie = req.headers.cookie;
    if (cookie !== undefined && this.o.auth.sessionCookie !== undefined) {
      // A cookie rides along on any page's request: only the service's own pages may use it.
      if (!sameOrigin(req, this.o.allowedOrigins)) throw new AppError(403, 'origin_not_allowed', 'a session cookie is only accepted from the service\'s own pages; use an inbox token');
      return this.o.auth.sessionCookie(cookie);
    }
    throw new AppError(401, 'unauthorized', 'authenticate with an API key (Authorization: Bearer), an inbox token (?token=) or the dashboard session');
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    if (this.recheckTimer !== null) clearInterval(this.recheckTimer);
    if (this.leaseTimer !== null) clearInterval(this.leaseTimer);
    for (const c of [...this.connections]) c.close(CLOSE.serviceRestart, 'node stopping; reconnect with since');
    this.presence.stop();
    await this.fanout.stop();
    await this.o.bus.close();
    await this.o.notices.close();
  }
}

function sameOrigin(req: IncomingMessage, allowed: string[]): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  const host = req.headers.host;
  if (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`)) return true;
  return allowed.includes(origin);
}
