import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { verifyStandardWebhook, verifyXSignature } from '../../docs/examples/verify-webhook.mjs';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** Both signatures checked with the documented method and the standardwebhooks package. */
  signaturesValid: boolean;
  status: number;
}

/** What the receiver does with the n-th (1-based) webhook POST. */
export type Behaviour =
  | { status: number; body?: string; headers?: Record<string, string> }
  | 'hang'
  | 'garbage'
  | 'half-close'
  | 'destroy';

export interface TestReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Challenge values received by GET. */
  challenges: string[];
  /** POSTs answered 2xx, by webhook-id. */
  delivered(): Map<string, number>;
  setSecret(secret: string): void;
  behave(fn: (n: number, req: IncomingMessage) => Behaviour | Promise<Behaviour>): void;
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback that answers the registration challenge and
 * verifies every POST's signatures both ways: with the documented code
 * (docs/examples/verify-webhook.mjs) and with the `standardwebhooks` package.
 */
export async function startReceiver(opts: { secret?: string; path?: string } = {}): Promise<TestReceiver> {
  let secret = opts.secret ?? '';
  let behaviour: (n: number, req: IncomingMessage) => Behaviour | Promise<Behaviour> = () => ({ status: 200 });
  const requests: ReceivedRequest[] = [];
  const challenges: string[] = [];
  const sockets = new Set<Socket>();
  let posts = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'GET') {
          const challenge = url.searchParams.get('challenge');
          if (challenge !== null) challenges.push(challenge);
          res.writeHead(200, { 'content-type': 'text/plain' }).end(challenge ?? '');
          return;
        }
        const n = ++posts;
        let valid = false;
        if (secret !== '') {
          const std = verifyStandardWebhook(secret, req.headers, body);
          let lib = false;
          try {
            new Webhook(secret).verify(body.toString('utf8'), req.headers as Record<string, string>);
            lib = true;
          } catch {
            lib = false;
          }
          valid = std && lib && verifyXSignature(secret, body, req.headers['x-signature'] as string | undefined);
        }
        const b = await behaviour(n, req);
        const record: ReceivedRequest = { method: req.method ?? '', path: url.pathname, headers: req.headers, body, signaturesValid: valid, status: 0 };
        if (b === 'hang') {
          requests.push(record);
          return;
        }
        if (b === 'destroy') {
          requests.push(record);
          req.socket.destroy();
          return;
        }
        if (b === 'garbage') {
          requests.push(record);
          req.socket.end('NOT HTTP AT ALL\r\n\r\n');
          return;
        }
        if (b === 'half-close') {
          requests.push(record);
          req.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial');
          req.socket.end();
          return;
        }
        record.status = b.status;
        requests.push(record);
        res.writeHead(b.status, { 'content-type': 'text/plain', ...b.headers }).end(b.body ?? 'ok');
      })();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${opts.path ?? '/hook'}`,
    port,
    requests,
    challenges,
    delivered() {
      const m = new Map<string, number>();
      for (const r of requests) {
        if (r.method === 'POST' && r.status >= 200 && r.status < 300) {
          const id = String(r.headers['webhook-id']);
          m.set(id, (m.get(id) ?? 0) + 1);
        }
      }
      return m;
    },
    setSecret(s) {
      secret = s;
    },
    behave(fn) {
      behaviour = fn;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
