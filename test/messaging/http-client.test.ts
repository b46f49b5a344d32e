import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, HttpExchangeError } from '../../src/network/http-client.js';

/** The keep-alive client the Graph adapter and the sandbox's webhooks use: what it reports when an exchange fails, and how far the request got. */
describe('keep-alive HTTP client', () => {
  let server: Server;
  let base: string;
  let connections = 0;
  const client = createHttpClient();

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (req.url === '/echo') {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
        } else if (req.url === '/drop') {
          // Took the whole request, then the connection died before any answer.
          req.socket.destroy();
        } else if (req.url === '/half') {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
          res.write('{"partial":');
          setTimeout(() => req.socket.destroy(), 20);
        }
        // '/hang': never answers.
      });
    });
    server.on('connection', () => connections++);
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends the method, headers and body, returns status and text, and reuses the connection', async () => {
    const before = connections;
    for (let i = 0; i < 3; i++) {
      const r = await client.request(`${base}/echo`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: `{"n":${i}}`, timeoutMs: 2000 });
      expect(r.status).toBe(201);
      expect(JSON.parse(r.text)).toEqual({ method: 'POST', auth: 'Bearer t', body: `{"n":${i}}` });
    }
    expect(connections - before).toBe(1);
  });

  it('a refused connection failed before anything was sent', async () => {
    const err = await client.request('http://127.0.0.1:1/x', { method: 'POST', headers: {}, body: '{}', timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpExchangeError);
    expect(err).toMatchObject({ reason: 'failed', requestSent: false });
  });

  it('no answer in time: a timeout, after the request was sent', async () => {
    const err = await client.request(`${base}/hang`, { method: 'POST', headers: {}, body: '{"a":1}', timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'HttpExchangeError', reason: 'timeout', requestSent: true });
  });

  it('a connection dropped after the request, or in the middle of the answer, may have been acted on', async () => {
    expect(await client.request(`${base}/drop`, { method: 'POST', headers: {}, body: '{"a":1}', timeoutMs: 2000 }).catch((e: unknown) => e)).toMatchObject({ reason: 'failed', requestSent: true });
    expect(await client.request(`${base}/half`, { method: 'POST', headers: {}, body: '{"a":1}', timeoutMs: 2000 }).catch((e: unknown) => e)).toMatchObject({ reason: 'failed', requestSent: true });
    // And the client still works afterwards.
    expect((await client.request(`${base}/echo`, { method: 'GET', headers: {}, timeoutMs: 2000 })).status).toBe(201);
  });

  it('never reuses a connection idle past idleMs by the clock though its timer has not fired (a paused process): the server closed it meanwhile', async () => {
    // Its own server, to close the server's side of the connection as a 5 s keep-alive timeout would have.
    let served = 0;
    const ends: Socket[] = [];
    const own = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        served++;
        res.end('{}');
      });
    });
    own.on('connection', (s: Socket) => ends.push(s));
    own.listen(0, '127.0.0.1');
    await new Promise((r) => own.once('listening', r));
    const url = `http://127.0.0.1:${(own.address() as AddressInfo).port}/m`;
    let clock = 1_000_000;
    const resumed = createHttpClient({ idleMs: 4_000, now: () => clock });
    try {
      expect((await resumed.request(url, { method: 'POST', headers: {}, body: '{}', timeoutMs: 2000 })).status).toBe(200);
      // Paused past the idle time: the server closed the connection, and the request that runs first on
      // resuming is made before this process has had an I/O turn to see it go.
      for (const s of ends) s.destroy();
      clock += 4_000;
      const after = await resumed.request(url, { method: 'POST', headers: {}, body: '{}', timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(after).toMatchObject({ status: 200 });
      expect(served).toBe(2);
    } finally {
      resumed.close();
      own.closeAllConnections();
      await new Promise((r) => own.close(r));
    }
  });
});
