import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import { AppError, isAppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { VisitorHub, VisitorFrame, VisitorSubscriber } from './hub.js';
import type { VisitorAccess, WebChatService } from './service.js';
import { unstorableText, unstorableTextMessage } from '../storable-text.js';
import { refuseUpgrade, upgradeUrl } from '../http/upgrades.js';

export const VISITOR_SOCKET_PATH = '/webchat/v1/socket';

/** What a visitor's browser sends on its socket. */
export const visitorClientFrame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message'), text: z.string().max(16_384), clientId: z.string().min(1).max(64).optional() }).strict(),
  z.object({ type: z.literal('typing') }).strict(),
  z.object({ type: z.literal('read') }).strict(),
]);

export interface VisitorSocketOptions {
  service: WebChatService;
  hub: VisitorHub;
  log: Logger;
  heartbeatMs: number;
  /** How often each socket's token is read again (a revocation whose notice was lost). */
  recheckMs: number;
}

/** Close codes a visitor's socket ends with. */
export const VISITOR_CLOSE = { revoked: 4001, tooFast: 4008, serviceRestart: 1012 } as const;

/**
 * The visitors' WebSocket endpoint, `/webchat/v1/socket?channel=<id>&token=<visitor token>`,
 * apart from the agents' `/ws`: a visitor token opens nothing else, and an
 * agent's credential opens nothing here.
 *
 * - The upgrade is refused as HTTP (the error shape) unless its Origin is an
 *   allowed origin of the channel, the address is under its rate limit and
 *   the token names a visitor of that channel.
 * - The socket carries the visitor's conversation live (`message`, `typing`
 *   frames) and takes `message`, `typing` and `read` frames; each message is
 *   answered `ack` (with the stored message) or `error`, by `clientId`.
 * - At most 10 frames a second per socket (burst 20); past it the socket closes (4008).
 * - Revoked tokens close their sockets (4001) on every node.
 */
export class VisitorSocketServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024, perMessageDeflate: false, clientTracking: false });
  private readonly sockets = new Set<VisitorConnection>();
  private heartbeat: NodeJS.Timeout | null = null;
  private recheck: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(private readonly o: VisitorSocketOptions) {}

  start(server: Server): void {
    server.on('upgrade', (req, socket, head) => {
      const url = upgradeUrl(req);
      if (url === null || url.pathname !== VISITOR_SOCKET_PATH) return;
      void this.upgrade(req, url, socket, head);
    });
    this.heartbeat = setInterval(() => {
      for (const c of this.sockets) {
        if (!c.alive) {
          c.ws.terminate();
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
    }, this.o.heartbeatMs);
    this.heartbeat.unref();
    this.recheck = setInterval(() => {
      for (const c of this.sockets) void c.recheck();
    }, this.o.recheckMs);
    this.recheck.unref();
  }

  get size(): number {
    return this.sockets.size;
  }

  private async upgrade(req: IncomingMessage, url: URL, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    let access: VisitorAccess;
    const token = url.searchParams.get('token') ?? undefined;
    try {
      if (this.closing) throw new AppError(503, 'shutting_down', 'this node is stopping; connect again', undefined, { retryAfterSeconds: 1 });
      const unstorable = unstorableText(Object.fromEntries(url.searchParams));
      if (unstorable !== null) throw new AppError(400, 'validation_failed', unstorableTextMessage(unstorable, 'query'));
      const channel = await this.o.service.channelFor(url.searchParams.get('channel') ?? '', req.headers.origin);
      await this.o.service.countAddress(req.socket.remoteAddress);
      access = await this.o.service.authenticate(channel, token);
    } catch (err) {
      const e = isAppError(err) ? err : new AppError(500, 'internal_error', 'the upgrade failed');
      if (!isAppError(err)) this.o.log.error('webchat upgrade failed', { err });
      return refuseUpgrade(socket, e);
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => void this.open(ws, access, token!));
  }

  private async open(ws: WebSocket, access: VisitorAccess, token: string): Promise<void> {
    const conn = new VisitorConnection(ws, access, token, this.o, () => {
      this.sockets.delete(conn);
      this.o.hub.remove(conn);
    });
    this.sockets.add(conn);
    this.o.hub.add(conn);
    try {
      const { unreadCount } = await this.o.service.history(access);
      conn.send({ type: 'welcome', visitorId: access.visitor.id, audienceExternalId: access.audienceExternalId, unreadCount, heartbeatSeconds: Math.round(this.o.heartbeatMs / 1000) });
    } catch (err) {
      this.o.log.warn('webchat: welcome failed', { err });
      conn.close(1011, 'try again');
    }
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    if (this.recheck !== null) clearInterval(this.recheck);
    for (const c of [...this.sockets]) c.close(VISITOR_CLOSE.serviceRestart, 'node stopping; reconnect');
  }
}

class VisitorConnection implements VisitorSubscriber {
  alive = true;
  private tokens = 20;
  private refilled = Date.now();
  private closed = false;
  readonly organizationId: string;
  readonly audienceExternalId: string;
  readonly channelId: string;

  constructor(
    readonly ws: WebSocket,
    private readonly access: VisitorAccess,
    private readonly token: string,
    private readonly o: VisitorSocketOptions,
    private readonly onClose: () => void,
  ) {
    this.organizationId = access.channel.organizationId;
    this.audienceExternalId = access.audienceExternalId;
    this.channelId = access.channel.id;
    ws.on('pong', () => (this.alive = true));
    ws.on('close', () => {
      this.closed = true;
      this.onClose();
    });
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => void this.received(isBinary ? null : data.toString()));
  }

  frame(f: VisitorFrame): void {
    this.send(f);
  }

  revoked(): void {
    this.close(VISITOR_CLOSE.revoked, 'visitor token revoked');
  }

  send(frame: unknown): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    // A visitor that reads nothing is cut off rather than held in memory.
    if (this.ws.bufferedAmount > 256 * 1024) return this.close(1013, 'too slow');
    this.ws.send(JSON.stringify(frame));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
    this.onClose();
  }

  async recheck(): Promise<void> {
    try {
      if (!(await this.o.service.stillValid(this.access, this.token))) this.revoked();
    } catch (err) {
      this.o.log.debug('webchat: token recheck failed', { err });
    }
  }

  private allow(): boolean {
    const now = Date.now();
    this.tokens = Math.min(20, this.tokens + ((now - this.refilled) / 1000) * 10);
    this.refilled = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private async received(text: string | null): Promise<void> {
    if (!this.allow()) return this.close(VISITOR_CLOSE.tooFast, 'too many frames');
    let parsed: z.infer<typeof visitorClientFrame>;
    try {
      const frame: unknown = text === null ? null : JSON.parse(text);
      const unstorable = unstorableText(frame);
      if (unstorable !== null) return this.send({ type: 'error', error: { code: 'validation_failed', message: unstorableTextMessage(unstorable, 'frame') } });
      const r = visitorClientFrame.safeParse(frame);
      if (!r.success) throw new Error('bad frame');
      parsed = r.data;
    } catch {
      return this.send({ type: 'error', error: { code: 'validation_failed', message: 'frames are JSON: {type:"message", text, clientId?}, {type:"typing"} or {type:"read"}' } });
    }
    try {
      if (parsed.type === 'typing') return this.o.hub.visitorTyping(this.organizationId, this.audienceExternalId);
      if (parsed.type === 'read') {
        await this.o.service.markRead(this.access);
        return this.send({ type: 'read', unreadCount: 0 });
      }
      const message = await this.o.service.send(this.access, parsed.text, parsed.clientId);
      this.send({ type: 'ack', clientId: parsed.clientId ?? null, message });
    } catch (err) {
      const e = isAppError(err) ? err : new AppError(500, 'internal_error', 'the message could not be sent; try again');
      if (!isAppError(err)) this.o.log.error('webchat: visitor frame failed', { err });
      this.send({ type: 'error', ...(parsed.type === 'message' ? { clientId: parsed.clientId ?? null } : {}), error: { code: e.code, message: e.message, ...(e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds }) } });
    }
  }
}
