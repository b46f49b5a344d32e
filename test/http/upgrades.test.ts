import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../harness/service.js';

/** The status line a raw upgrade request is answered with, and whether the server closed the socket (within 5 s). */
function upgrade(svc: TestService, target: string): Promise<{ statusLine: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(svc.url).port), '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`),
    );
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ statusLine: out.split('\r\n')[0]!, closed: false });
    }, 5000);
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ statusLine: out.split('\r\n')[0]!, closed: true });
    });
    socket.on('error', () => {});
  });
}

/**
 * Upgrade requests no socket endpoint takes. Node hands every upgrade
 * request to the `upgrade` listeners; before, one to another path was left
 * open for good, and one whose target is no URL (`//[`) threw in the
 * listener and ended the process.
 */
describe('upgrade requests', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  it('to a path no socket endpoint serves: 404, and the socket is closed', async () => {
    for (const target of ['/nope', '/ws/', '/ws%00', '/webchat/v1/sockets']) expect(await upgrade(svc, target), target).toEqual({ statusLine: 'HTTP/1.1 404 Not Found', closed: true });
  });

  it('whose target is no URL: 400, and the node goes on serving', async () => {
    for (const target of ['//[', 'http://[']) expect(await upgrade(svc, target), target).toEqual({ statusLine: 'HTTP/1.1 400 Bad Request', closed: true });
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });

  it('to the socket endpoints still reach them (their own refusals)', async () => {
    expect((await upgrade(svc, '/ws')).statusLine).toBe('HTTP/1.1 401 Unauthorized');
    expect((await upgrade(svc, '/webchat/v1/socket?channel=ch_nope&token=x')).statusLine).toBe('HTTP/1.1 404 Not Found');
    expect((await upgrade(svc, '/webchat/v1/socket?channel=a%00&token=x')).statusLine).toBe('HTTP/1.1 400 Bad Request');
  });
});
