/**
 * The idle visitors of `bench/webchat.ts`, in a process of their own so the
 * server's memory per visitor is read without their client sockets: opens N
 * visitors of one kind (Switchboard's: started over HTTP, then its visitor
 * socket; the bare relay's: a socket) and keeps them connected until told.
 */
import { WebSocket } from 'ws';

interface Open {
  op: 'open';
  kind: 'bare' | 'switchboard';
  base: string;
  channelId?: string;
  origin: string;
  n: number;
}

const sockets: WebSocket[] = [];

function connect(url: string, origin: string, ready: 'open' | 'message'): Promise<WebSocket> {
  const ws = new WebSocket(url, { origin, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once(ready, () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

async function one(o: Open, i: number): Promise<WebSocket> {
  const wsBase = o.base.replace(/^http/, 'ws');
  if (o.kind === 'bare') return connect(`${wsBase}/visitor?visitor=idle${i}`, o.origin, 'open');
  const r = await fetch(`${o.base}/webchat/v1/channels/${o.channelId}/visitors`, { method: 'POST', headers: { origin: o.origin, 'content-type': 'application/json' }, body: '{}' });
  const v = (await r.json()) as { token: string };
  if (r.status !== 201) throw new Error(`visitor start: ${r.status} ${JSON.stringify(v)}`);
  // Ready at its welcome frame.
  return connect(`${wsBase}/webchat/v1/socket?channel=${o.channelId}&token=${encodeURIComponent(v.token)}`, o.origin, 'message');
}

process.on('message', (msg: { op: string } & Partial<Open>) => {
  void (async () => {
    if (msg.op === 'open') {
      const o = msg as Open;
      for (let i = 0; i < o.n; i += 100) sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, o.n - i) }, (_, j) => one(o, i + j)))));
      process.send!({ op: 'opened' });
    } else if (msg.op === 'close') {
      for (const s of sockets.splice(0)) s.terminate();
      process.send!({ op: 'closed' });
    }
  })().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
});
process.send!({ op: 'ready' });
