/**
 * `webhooks listen --forward-to <url>`: local webhook development without a
 * public URL. It watches the organization's event stream (the live inbox
 * socket, `/ws`, with an API key) and POSTs each event to the local URL as a
 * webhook delivery would: the same body (`{id, type, createdAt,
 * organizationId, data}`) and the same signature headers (`X-Signature`, and
 * `webhook-id` / `webhook-timestamp` / `webhook-signature`), signed with a
 * secret made for this session and printed at the start. Nothing is
 * registered with the service, and nothing is retried: a failed forward is
 * printed and the next event goes on.
 *
 * It reconnects after a dropped connection (a node restarting closes with
 * 1012) from the last event seen, so events in between are forwarded too.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import WebSocket from 'ws';
import { webhookBody } from '../webhooks/dispatcher.js';
import { generateSecret, signRequest } from '../webhooks/signing.js';
import type { DomainEvent } from '../events/types.js';
import type { LocalContext } from './local-command.js';

interface EventFrame extends DomainEvent {
  seq: number;
}

const isEventFrame = (f: Record<string, unknown>): f is EventFrame & Record<string, unknown> =>
  typeof f.id === 'string' && typeof f.seq === 'number' && typeof f.type === 'string' && typeof f.createdAt === 'string' && typeof f.organizationId === 'string';

export async function webhooksListenCommand(ctx: LocalContext): Promise<number> {
  const forwardTo = ctx.flags['forward-to']!;
  let target: URL;
  try {
    target = new URL(forwardTo);
  } catch {
    ctx.err(`--forward-to must be an absolute http(s) URL, like http://localhost:4000/hook (got ${forwardTo})`);
    return 2;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    ctx.err(`--forward-to must use http or https (got ${target.protocol})`);
    return 2;
  }
  const key = ctx.flags.key ?? ctx.env.SB_KEY;
  if (!key) {
    ctx.err('no API key: pass --key or set SB_KEY (a key with the scope inbox:read; an admin key sees every event)');
    return 2;
  }
  const only = ctx.flags.events ? new Set(ctx.flags.events.split(',').map((e) => e.trim()).filter(Boolean)) : null;
  const secret = ctx.flags.secret ?? generateSecret();
  const wsUrl = new URL('/ws', ctx.connection().base.replace(/^http/, 'ws'));

  let lastSeq: number | undefined;
  let announced = false;
  let queue = Promise.resolve();
  const stopped = new Promise<void>((resolve) => {
    if (ctx.signal?.aborted) resolve();
    ctx.signal?.addEventListener('abort', () => resolve(), { once: true });
  });

  const forward = async (e: EventFrame): Promise<void> => {
    const body = webhookBody(e);
    // webhook-id is the event's id, as on a registration's deliveries.
    const headers = signRequest([secret], e.id, Math.floor(Date.now() / 1000), body);
    const started = Date.now();
    const outcome = await post(target, body, { ...headers, 'user-agent': 'switchboard-webhooks-listen' });
    const took = `${Date.now() - started} ms`;
    ctx.out(`${e.createdAt}  ${e.type.padEnd(22)} ${e.id}  -> ${outcome.status === null ? `failed: ${outcome.error}` : outcome.status} (${took})`);
  };

  for (let attempt = 0; ; attempt++) {
    if (ctx.signal?.aborted) return 0;
    const url = new URL(wsUrl);
    if (lastSeq !== undefined) url.searchParams.set('since', String(lastSeq));
    const outcome = await new Promise<{ fatal?: string; reason?: string }>((resolve) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
      const onAbort = () => ws.close(1000, 'listener stopped');
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
      ws.on('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d));
        res.on('end', () => {
          let message = text;
          try {
            message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
          } catch {
            // not JSON: show as is
          }
          // 401/403 will not get better by retrying; anything else might.
          resolve(res.statusCode === 401 || res.statusCode === 403 ? { fatal: `${res.statusCode}: ${message}` } : { reason: `${res.statusCode}: ${message}` });
        });
      });
      ws.on('error', (err) => resolve({ reason: err.message }));
      ws.on('message', (raw) => {
        let frame: Record<string, unknown>;
        try {
          frame = JSON.parse(String(raw)) as Record<string, unknown>;
        } catch {
          return;
        }
        if (frame.type === 'welcome') {
          attempt = 0;
          if (lastSeq === undefined) lastSeq = frame.seq as number;
          if (!announced) {
            announced = true;
            ctx.out(
              [
                `Ready. Forwarding the events of organization ${String(frame.organizationId)} to ${target.href}`,
                `${only ? `(only ${[...only].join(', ')}) ` : ''}signed with this session's secret (X-Signature and webhook-signature):`,
                '',
                `  ${secret}`,
                '',
                'Nothing is registered with the service. Ctrl-C to stop.',
              ].join('\n'),
            );
          }
          return;
        }
        if (!isEventFrame(frame)) return;
        lastSeq = frame.seq;
        if (only && !only.has(frame.type)) return;
        queue = queue.then(() => forward(frame));
      });
      ws.on('close', (code, reason) => {
        ctx.signal?.removeEventListener('abort', onAbort);
        resolve({ reason: `closed ${code}${reason.length > 0 ? ` ${String(reason)}` : ''}` });
      });
    });
    if (ctx.signal?.aborted) break;
    if (outcome.fatal !== undefined) {
      ctx.err(`cannot listen: ${outcome.fatal}`);
      return 1;
    }
    const delay = Math.min(10_000, 250 * 2 ** Math.min(attempt, 6));
    ctx.err(`connection to ${wsUrl.origin} lost (${outcome.reason}); reconnecting in ${(delay / 1000).toFixed(1)} s`);
    await Promise.race([new Promise((r) => setTimeout(r, delay)), stopped]);
  }
  await queue;
  return 0;
}

function post(url: URL, body: string, headers: Record<string, string>): Promise<{ status: number | null; error?: string }> {
  return new Promise((resolve) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, timeout: 15_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? null }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', (err) => resolve({ status: null, error: err.message }));
    req.end(body);
  });
}
