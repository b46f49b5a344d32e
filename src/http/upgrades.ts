import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** The URL an upgrade request asks for; null when its target is no URL (`//[`), which `new URL` throws on. */
export function upgradeUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://x');
  } catch {
    return null;
  }
}

/**
 * Answers every upgrade request that none of the `claimed` paths takes: 404
 * for another path, 400 for a target that is no URL, then closes the socket.
 * Once a server has `upgrade` listeners, Node hands them every upgrade
 * request and leaves a socket nobody answers open for good.
 */
export function refuseUnclaimedUpgrades(server: Server, claimed: readonly string[]): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const url = upgradeUrl(req);
    if (url !== null && claimed.includes(url.pathname)) return;
    socket.on('error', () => socket.destroy());
    const [status, code, message] = url === null ? [400, 'bad_request', 'the request target is not a URL'] : [404, 'not_found', 'no such endpoint'];
    const body = JSON.stringify({ success: false, error: { code, message } });
    socket.end(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Not Found'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
