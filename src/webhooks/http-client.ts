import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { blockedReason, hostOf, isLoopback, type AddressPolicy } from './address-guard.js';

/** Resolves a host name to every address it has (injectable for tests). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface WebhookHttpOptions {
  policy: AddressPolicy;
  /** The whole attempt (DNS, connect, response headers and body) gives up after this long. */
  timeoutMs: number;
  resolver?: Resolver;
  userAgent?: string;
}

/** What one request came to; never thrown, always returned. */
export interface HttpOutcome {
  /** HTTP status, null when no (valid) response arrived. */
  status: number | null;
  latencyMs: number;
  error: string | null;
  /** The address was refused by the SSRF guard (retrying will not help). */
  forbidden: boolean;
  /** Parsed `Retry-After`, in milliseconds. */
  retryAfterMs: number | null;
  /** The first few KiB of the response body. */
  body: string;
}

/** Response bytes kept for the record; reading stops (and the socket is dropped) past the drain limit. */
const KEEP_BYTES = 4096;
const DRAIN_LIMIT = 256 * 1024;

class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDR';
}

/**
 * The HTTP client of webhook deliveries and registration challenges.
 *
 * - The SSRF guard runs inside the socket's DNS lookup, on the addresses the
 *   connection will use, and again on the connected socket's remote address;
 *   literal IPs are checked before connecting.
 * - Redirects are never followed (a 3xx is just a status).
 * - One deadline covers the whole exchange; a hanging, garbage-speaking or
 *   half-closing receiver ends as an outcome with an error, never an exception.
 * - Keep-alive agents; a request that failed because a pooled socket had been
 *   closed by the receiver is retried once on a fresh one.
 */
export class WebhookHttpClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxFreeSockets: 16, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxFreeSockets: 16, scheduling: 'lifo' });
  private readonly resolver: Resolver;
  private readonly lookup: (plainHttp: boolean) => LookupFunction;

  constructor(private readonly opts: WebhookHttpOptions) {
    this.resolver = opts.resolver ?? systemResolver;
    this.lookup = (plainHttp) => (hostname, options, callback) => {
      this.resolver(hostname).then(
        (addrs) => {
          const refusals: string[] = [];
          const allowed = addrs.filter((a) => {
            const why = this.refuse(a.address, plainHttp);
            if (why !== null) refusals.push(why);
            return why === null;
          });
          if (allowed.length === 0) {
            const err = new ForbiddenAddressError(refusals.length > 0 ? `forbidden address: ${refusals.join('; ')}` : `${hostname} has no address`);
            (callback as (e: Error) => void)(err);
            return;
          }
          const wanted = options.family === 4 || options.family === 6 ? allowed.filter((a) => a.family === options.family) : allowed;
          const list = wanted.length > 0 ? wanted : allowed;
          if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, list);
          else (callback as (e: null, a: string, f: number) => void)(null, list[0]!.address, list[0]!.family);
        },
        (e: unknown) => (callback as (e: Error) => void)(e instanceof Error ? e : new Error(String(e))),
      );
    };
  }

  private refuse(ip: string, plainHttp: boolean): string | null {
    const why = blockedReason(ip, this.opts.policy);
    if (why !== null) return why;
    if (plainHttp && !isLoopback(ip)) return `plain http to ${ip} (http is only allowed to loopback)`;
    return null;
  }

  post(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<HttpOutcome> {
    return this.request('POST', url, body, headers, signal);
  }

  get(url: string, signal?: AbortSignal): Promise<HttpOutcome> {
    return this.request('GET', url, null, { accept: 'text/plain, application/json' }, signal);
  }

  private async request(method: string, rawUrl: string, body: string | null, headers: Record<string, string>, signal?: AbortSignal): Promise<HttpOutcome> {
    const started = performance.now();
    const first = await this.once(method, rawUrl, body, headers, started, signal);
    if (first.reusedSocketReset) return this.once(method, rawUrl, body, headers, started, signal, true).then((o) => o.outcome);
    return first.outcome;
  }

  private once(
    method: string,
    rawUrl: string,
    body: string | null,
    headers: Record<string, string>,
    started: number,
    signal?: AbortSignal,
    freshSocket = false,
  ): Promise<{ outcome: HttpOutcome; reusedSocketReset: boolean }> {
    const done = (o: Partial<HttpOutcome>, reusedSocketReset = false) => ({
      outcome: { status: null, error: null, forbidden: false, retryAfterMs: null, body: '', ...o, latencyMs: Math.round(performance.now() - started) },
      reusedSocketReset,
    });
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return Promise.resolve(done({ error: 'invalid url', forbidden: true }));
    }
    const plainHttp = url.protocol === 'http:';
    if (!plainHttp && url.protocol !== 'https:') return Promise.resolve(done({ error: `unsupported scheme ${url.protocol}`, forbidden: true }));
    const host = hostOf(url);
    if (isIP(host) !== 0) {
      const why = this.refuse(host, plainHttp);
      if (why !== null) return Promise.resolve(done({ error: `forbidden address: ${why}`, forbidden: true }));
    }

    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: { outcome: HttpOutcome; reusedSocketReset: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const mod = plainHttp ? http : https;
      const req = mod.request({
        method,
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          'user-agent': this.opts.userAgent ?? 'Switchboard-Webhooks/1',
          ...(body === null ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
        },
        agent: freshSocket ? false : plainHttp ? this.httpAgent : this.httpsAgent,
        lookup: this.lookup(plainHttp),
        servername: isIP(host) === 0 ? host : undefined,
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`timed out after ${this.opts.timeoutMs} ms`));
      }, this.opts.timeoutMs);
      const onAbort = () => req.destroy(new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });

      req.on('socket', (socket: Socket) => {
        // Belt and braces: the peer we are actually connected to (a pooled
        // socket was checked when it connected).
        if (!socket.connecting) return;
        socket.once('connect', () => {
          const remote = socket.remoteAddress;
          const why = remote === undefined ? 'unknown peer address' : this.refuse(remote, plainHttp);
          if (why !== null) req.destroy(new ForbiddenAddressError(`forbidden address: ${why}`));
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        const forbidden = e instanceof ForbiddenAddressError;
        const reset = !freshSocket && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        finish(done({ error: describeError(e), forbidden }, reset));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let total = 0;
        res.on('data', (c: Buffer) => {
          total += c.length;
          if (kept < KEEP_BYTES) {
            chunks.push(c.subarray(0, KEEP_BYTES - kept));
            kept += Math.min(c.length, KEEP_BYTES - kept);
          }
          if (total > DRAIN_LIMIT) {
            // Not worth reading on: the status is all that counts.
            res.destroy();
            req.destroy();
            finish(done({ status: res.statusCode ?? null, retryAfterMs: parseRetryAfter(res.headers['retry-after']), body: Buffer.concat(chunks).toString('utf8') }));
          }
        });
        res.on('end', () =>
          finish(done({ status: res.statusCode ?? null, retryAfterMs: parseRetryAfter(res.headers['retry-after']), body: Buffer.concat(chunks).toString('utf8') })),
        );
        res.on('error', (e) => finish(done({ status: null, error: `response aborted: ${describeError(e)}` })));
        res.on('aborted', () => finish(done({ status: null, error: 'response aborted by the receiver' })));
      });
      if (body !== null) req.end(body);
      else req.end();
    });
  }

  /** Closes pooled sockets. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function describeError(e: NodeJS.ErrnoException): string {
  if (e instanceof ForbiddenAddressError) return e.message;
  const code = e.code;
  if (code?.startsWith('HPE_')) return `invalid HTTP response (${code})`;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset by the receiver';
    case 'ENOTFOUND': return 'host not found';
    case 'EAI_AGAIN': return 'DNS lookup failed (temporary)';
    case 'ETIMEDOUT': return 'connection timed out';
    case 'EHOSTUNREACH': return 'host unreachable';
    default: return code !== undefined ? `${e.message}` : e.message;
  }
}

/** `Retry-After` as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
