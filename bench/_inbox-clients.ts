/**
 * The client side of `bench/inbox.ts`, in a process of its own so the
 * servers' CPU and memory are measured without it: opens N sockets of one
 * kind (raw ws, Switchboard's inbox, Socket.IO) and records, for every
 * marked frame, when each socket received it.
 */
import { WebSocket } from 'ws';
import { io, type Socket } from 'socket.io-client';

type Kind = 'ws' | 'inbox' | 'socketio';
interface Open {
  op: 'open';
  kind: Kind;
  url: string;
  n: number;
  key?: string;
}

const sockets: (WebSocket | Socket)[] = [];
/** marker → receive times (ms, epoch-based, fractional) */
const received = new Map<string, number[]>();
const now = () => performance.timeOrigin + performance.now();

function onText(text: string) {
  const m = /bench-marker-([A-Za-z0-9]+)/.exec(text);
  if (m === null) return;
  let list = received.get(m[1]!);
  if (list === undefined) received.set(m[1]!, (list = []));
  list.push(now());
}

async function open(o: Open): Promise<void> {
  const batch = 200;
  for (let i = 0; i < o.n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, o.n - i) }, () => {
        if (o.kind === 'socketio') {
          const s = io(o.url, { transports: ['websocket'], reconnection: false });
          s.on('event', (payload: string) => onText(payload));
          sockets.push(s);
          return new Promise<void>((resolve, reject) => {
            s.once('connect', () => resolve());
            s.once('connect_error', reject);
          });
        }
        const ws = new WebSocket(o.url, o.kind === 'inbox' ? { headers: { authorization: `Bearer ${o.key}` } } : {});
        ws.on('message', (d) => onText(d.toString()));
        sockets.push(ws);
        return new Promise<void>((resolve, reject) => {
          if (o.kind === 'inbox') ws.once('message', () => resolve()); // the welcome frame
          else ws.once('open', () => resolve());
          ws.once('error', reject);
        });
      }),
    );
  }
}

process.on('message', (msg: { op: string } & Record<string, unknown>) => {
  void (async () => {
    if (msg.op === 'open') {
      await open(msg as unknown as Open);
      process.send!({ op: 'opened', n: sockets.length });
    } else if (msg.op === 'collect') {
      const markers = msg.markers as string[];
      const out: Record<string, number[]> = {};
      for (const m of markers) out[m] = received.get(m) ?? [];
      process.send!({ op: 'collected', out });
    } else if (msg.op === 'count') {
      const markers = msg.markers as string[];
      process.send!({ op: 'counted', n: markers.reduce((s, m) => s + (received.get(m)?.length ?? 0), 0) });
    } else if (msg.op === 'close') {
      for (const s of sockets) (s as { close(): void }).close();
      sockets.length = 0;
      received.clear();
      process.send!({ op: 'closed' });
    }
  })();
});
process.send!({ op: 'ready' });
