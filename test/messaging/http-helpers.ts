import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';

/** Listens on a free loopback port; `close` ends open connections too. */
export async function listen(app: Express | ((req: IncomingMessage, res: ServerResponse) => void)): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An express app that keeps the raw body, as the service's does. */
export function rawBodyApp(): Express {
  const app = express();
  app.use(express.json({ verify: (req, _res, buf) => ((req as unknown as { rawBody: Buffer }).rawBody = buf) }));
  return app;
}
