import { WebSocket } from 'ws';
import { OPERATOR_TOKEN, type TestService } from '../harness/service.js';

export const SITE = 'https://shop.example';

/** A web chat channel of the organization, allowed on `SITE` (and `origins`). */
export async function webChat(svc: TestService, orgId: string, origins: string[] = [SITE], widget?: Record<string, unknown>) {
  const r = await svc.call('POST', `/admin/v1/organizations/${orgId}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'web_chat', name: 'Site chat', allowedOrigins: origins, ...(widget ? { widget } : {}) } });
  if (r.status !== 201) throw new Error(`channel create failed: ${JSON.stringify(r.body)}`);
  return r.body as { id: string; identitySecret?: string; allowedOrigins: string[] };
}

/** A visitor's request, as the widget makes it from a page of `origin`. */
export function visitorCall(svc: TestService, channelId: string, origin: string = SITE) {
  return (method: string, path: string, opts: { token?: string; body?: unknown } = {}) =>
    svc.call(method, `/webchat/v1/channels/${channelId}${path}`, { ...(opts.token ? { key: opts.token } : {}), body: opts.body, headers: { origin } });
}

/** A visitor's socket, with every frame it received. */
export class VisitorSocket {
  readonly frames: any[] = [];
  private waiters: (() => void)[] = [];
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      this.frames.push(JSON.parse(d.toString()));
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static open(svc: TestService, channelId: string, token: string, origin: string = SITE): Promise<VisitorSocket> {
    const url = `${svc.url.replace(/^http/, 'ws')}/webchat/v1/socket?channel=${channelId}&token=${encodeURIComponent(token)}`;
    const ws = new WebSocket(url, { origin });
    const s = new VisitorSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(s));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** Waits until a frame matches (or the socket closed). */
  async until(match: (f: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.find(match);
      if (f !== undefined) return f;
      if (this.closeCode !== null) throw new Error(`socket closed (${this.closeCode}) before the frame came; frames: ${JSON.stringify(this.frames)}`);
      if (Date.now() > deadline) throw new Error(`no such frame; frames: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  async closed(timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === null) {
      if (Date.now() > deadline) throw new Error('socket still open');
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.closeCode;
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  close(): void {
    this.ws.close();
  }
}

/** Upgrades to the visitor socket and returns the HTTP status of the refusal (or 101). */
export function upgradeStatus(svc: TestService, channelId: string, token: string, origin?: string): Promise<number> {
  const url = `${svc.url.replace(/^http/, 'ws')}/webchat/v1/socket?channel=${channelId}&token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url, origin === undefined ? {} : { origin });
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', () => resolve(0));
  });
}
