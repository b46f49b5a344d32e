import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Answers an upgrade request with `e` as an HTTP response in the API's error shape (no socket opens), then closes the connection. */
export function refuseUpgrade(socket: Duplex, e: AppError, extraHeaders: readonly string[] = []): void {
  const body = JSON.stringify({ success: false, error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } });
  const headers = [`HTTP/1.1 ${e.status} ${REASONS[e.status] ?? 'Error'}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', ...extraHeaders];
  if (e.retryAfterSeconds !== undefined) headers.push(`Retry-After: ${e.retryAfterSeconds}`);
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
}

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
    refuseUpgrade(socket, url === null ? new AppError(400, 'bad_request', 'the request target is not a URL') : new AppError(404, 'not_found', 'no such endpoint'));
  });
}
