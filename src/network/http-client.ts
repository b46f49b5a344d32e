import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

/** One HTTP exchange as the chat-network code needs it: a small JSON request, the answer as text. */
export interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange (connect, send, answer) must finish within this. */
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  text: string;
}

/**
 * An exchange that did not complete. `requestSent` says whether the whole
 * request had been handed to the connection before it failed: only then can
 * the other side have acted on it (a send that failed earlier certainly did
 * not leave).
 */
export class HttpExchangeError extends Error {
  constructor(
    message: string,
    readonly reason: 'timeout' | 'failed',
    readonly requestSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HttpExchangeError';
  }
}

export interface HttpClient {
  request(url: string, req: HttpRequest): Promise<HttpAnswer>;
  /** Closes idle connections. */
  close(): void;
}

/**
 * An HTTP/1.1 client over node:http with keep-alive connections: the Graph
 * adapter's sends and the sandbox network's webhooks are small JSON
 * exchanges with the same few hosts, where the global `fetch` (WHATWG
 * streams, Headers, AbortSignal per request) costs about twice the CPU.
 *
 * Idle connections are closed after `idleMs` (default 4 s), before a Node
 * server's default 5 s keep-alive timeout would close them under a request.
 * Requests are never retried: a POST that may have arrived must not be sent twice.
 *
 * Guarantees:
 * - A connection idle for `idleMs` or longer by the clock (`now`) is never
 *   reused, even when its idle timer could not fire: a process that was
 *   paused (SIGSTOP, a frozen VM) or whose event loop was blocked resumes
 *   with connections the server has closed meanwhile, and a request written
 *   on one is lost and reported as "may have arrived" (`requestSent`), which
 *   a keyed send must then wait out and pay for as a copy that may exist.
 */
export function createHttpClient(opts: { idleMs?: number; maxSockets?: number; now?: () => number } = {}): HttpClient {
  const idleMs = opts.idleMs ?? 4_000;
  const now = opts.now ?? Date.now;
  const agentOptions = { keepAlive: true, timeout: idleMs, maxSockets: opts.maxSockets ?? 256, scheduling: 'lifo' as const };
  /** When each pooled connection last went idle. */
  const idleSince = new WeakMap<object, number>();
  class StampedHttpAgent extends http.Agent {
    override keepSocketAlive(socket: Socket): boolean {
      idleSince.set(socket, now());
      return (http.Agent.prototype.keepSocketAlive as unknown as (s: Socket) => boolean).call(this, socket);
    }
  }
  class StampedHttpsAgent extends https.Agent {
    override keepSocketAlive(socket: Socket): boolean {
      idleSince.set(socket, now());
      return (https.Agent.prototype.keepSocketAlive as unknown as (s: Socket) => boolean).call(this, socket);
    }
  }
  const agents = { http: new StampedHttpAgent(agentOptions), https: new StampedHttpsAgent(agentOptions) };
  /** Drops pooled connections idle past `idleMs` whose timer has not fired yet (the process was paused or busy). */
  const dropStale = (agent: http.Agent) => {
    const t = now();
    for (const list of Object.values(agent.freeSockets as Record<string, Socket[] | undefined>)) {
      if (list === undefined) continue;
      for (let i = list.length - 1; i >= 0; i--) {
        const socket = list[i]!;
        if (t - (idleSince.get(socket) ?? t) < idleMs) continue;
        // Out of the pool first (the agent skips destroyed connections only at the head of its list).
        list.splice(i, 1);
        socket.destroy();
      }
    }
  };
  return {
    request(url, r) {
      return new Promise<HttpAnswer>((resolve, reject) => {
        let u: URL;
        try {
          u = new URL(url);
        } catch (e) {
          reject(new HttpExchangeError(`invalid URL ${url}`, 'failed', false, { cause: e }));
          return;
        }
        const secure = u.protocol === 'https:';
        dropStale(secure ? agents.https : agents.http);
        const headers: Record<string, string | number> = { ...r.headers };
        if (r.body !== undefined) headers['content-length'] = Buffer.byteLength(r.body);
        let sent = false;
        let settled = false;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          fn();
        };
        const req = (secure ? https : http).request(u, { method: r.method, headers, agent: secure ? agents.https : agents.http }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => settle(() => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })));
          res.on('error', (e) => settle(() => reject(new HttpExchangeError('the connection closed mid-answer', 'failed', true, { cause: e }))));
          res.on('aborted', () => settle(() => reject(new HttpExchangeError('the connection closed mid-answer', 'failed', true))));
        });
        // The request is complete on the wire (handed to the OS): from here on the other side may act on it.
        req.on('finish', () => {
          sent = true;
        });
        req.on('error', (e) => settle(() => reject(new HttpExchangeError(e.message, 'failed', sent, { cause: e }))));
        const timer = setTimeout(() => {
          settle(() => reject(new HttpExchangeError(`no answer within ${r.timeoutMs} ms`, 'timeout', sent)));
          req.destroy();
        }, r.timeoutMs);
        req.end(r.body);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The same interface over a `fetch` implementation (tests that intercept requests). */
export function fetchHttpClient(fetchImpl: typeof fetch): HttpClient {
  return {
    async request(url, r) {
      const ctrl = new AbortController();
      const timer = setTimeout(() => ctrl.abort(), r.timeoutMs);
      try {
        let res: Response;
        try {
          res = await fetchImpl(url, { method: r.method, headers: r.headers, body: r.body, signal: ctrl.signal });
        } catch (e) {
          // fetch does not say how far a failed request got: only a timeout may have left.
          throw new HttpExchangeError(ctrl.signal.aborted ? `no answer within ${r.timeoutMs} ms` : 'unreachable', ctrl.signal.aborted ? 'timeout' : 'failed', ctrl.signal.aborted, { cause: e });
        }
        try {
          return { status: res.status, text: await res.text() };
        } catch (e) {
          throw new HttpExchangeError('the connection closed mid-answer', ctrl.signal.aborted ? 'timeout' : 'failed', true, { cause: e });
        }
      } finally {
        clearTimeout(timer);
      }
    },
    close() {},
  };
}
