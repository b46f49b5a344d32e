import { WebSocket } from 'ws';
import { OPERATOR_TOKEN, type TestOrg, type TestService } from '../harness/service.js';

export interface Frame {
  type: string;
  [k: string]: any;
}

/** A test client of the live inbox: collects every frame, sends commands and waits for their answers. */
export class InboxClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: (() => void)[] = [];
  private n = 0;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Opens a socket; resolves on the welcome frame. */
  static async connect(url: string, key: string | null, opts: { since?: number; headers?: Record<string, string>; token?: string } = {}): Promise<InboxClient> {
    const query = new URLSearchParams();
    if (opts.since !== undefined) query.set('since', String(opts.since));
    if (opts.token !== undefined) query.set('token', opts.token);
    const q = query.size === 0 ? '' : `?${query}`;
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws${q}`, { headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...opts.headers } });
    const c = new InboxClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
    await c.waitFor((f) => f.type === 'welcome');
    return c;
  }

  /** The first frame (from the start) matching, waiting for it. */
  async waitFor(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.find(pred);
      if (f !== undefined) return f;
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) while waiting`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame in time; got ${this.frames.map((x) => x.type).join(',')}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  async waitForClose(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('socket not closed in time');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.closed;
  }

  /** Sends a command with a fresh id (unless given) and resolves with its ack or error frame. */
  async command(cmd: Record<string, unknown>): Promise<Frame> {
    const id = (cmd.id as string | undefined) ?? `c${++this.n}-${Math.random().toString(36).slice(2)}`;
    const before = this.frames.length;
    this.ws.send(JSON.stringify({ ...cmd, id }));
    return this.waitFor((f) => this.frames.indexOf(f) >= before && (f.type === 'ack' || f.type === 'error') && f.commandId === id);
  }

  /** Event frames (those with a seq). */
  events(): Frame[] {
    return this.frames.filter((f) => typeof f.seq === 'number' && f.type !== 'welcome' && f.type !== 'replay_done' && f.type !== 'resync_required');
  }

  lastSeq(): number {
    const seqs = this.frames.filter((f) => typeof f.seq === 'number').map((f) => f.seq as number);
    return seqs.length === 0 ? 0 : Math.max(...seqs);
  }

  close(): void {
    this.ws.close();
  }
}

/** Another agent of the organization, with a key of every scope. */
export async function extraAgent(svc: TestService, org: TestOrg, name: string): Promise<{ id: string; key: string }> {
  const call = (method: string, path: string, body: unknown) => svc.call(method, path, { key: OPERATOR_TOKEN, body });
  const u = await call('POST', `/admin/v1/organizations/${org.id}/users`, { email: `${name}@${org.id}.test`, name, role: 'agent', password: 'correct horse battery' });
  const k = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { userId: u.body.id, scopes: ['inbox:read', 'inbox:write', 'contacts:read', 'conversation:handover:request', 'tickets:read', 'tickets:create'] });
  return { id: u.body.id as string, key: k.body.key as string };
}
