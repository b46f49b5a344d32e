import { api, ok } from '../api/client';
import type { ClientCommand, ServerFrame } from './frames';

export interface InboxSocketEvents {
  frame(f: ServerFrame): void;
  /** `open` after the welcome, `reconnecting` while waiting to try again. */
  state(s: 'connecting' | 'open' | 'reconnecting' | 'closed'): void;
}

/**
 * One live connection to `/ws`, kept open: each attempt gets a fresh
 * single-use inbox token, and a reconnect resumes with `since` = the last
 * event sequence seen, so nothing between the two sockets is missed.
 *
 * Guarantees:
 * - `lastSeq` only grows, and is what the next connection asks to resume after;
 * - a closed socket is retried with backoff (0.5 s doubling to 10 s) until `stop()`;
 * - commands sent while disconnected are refused at once (the caller shows it), never queued silently.
 */
export class InboxSocket {
  private ws: WebSocket | null = null;
  private stopped = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  lastSeq: number | null = null;

  constructor(private readonly on: InboxSocketEvents) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ws?.close(1000, 'bye');
    this.ws = null;
    this.on.state('closed');
  }

  noteSeq(seq: number): void {
    if (this.lastSeq === null || seq > this.lastSeq) this.lastSeq = seq;
  }

  send(cmd: ClientCommand): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(cmd));
    return true;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.on.state(this.attempt === 0 ? 'connecting' : 'reconnecting');
    let token: string;
    try {
      token = (await ok(api.POST('/v1/inbox/token'))).token;
    } catch {
      // Signed out (the session listener moves to /login) or the service is down: try later.
      return this.retry();
    }
    if (this.stopped) return;
    const url = new URL('/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', token);
    if (this.lastSeq !== null) url.searchParams.set('since', String(this.lastSeq));
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onmessage = (e) => {
      let f: ServerFrame;
      try {
        f = JSON.parse(String(e.data)) as ServerFrame;
      } catch {
        return;
      }
      if (f.type === 'welcome') {
        this.attempt = 0;
        this.on.state('open');
      }
      this.on.frame(f);
    };
    ws.onclose = () => {
      if (this.ws === ws) this.ws = null;
      this.retry();
    };
    // An error is followed by close; nothing else to do here.
    ws.onerror = () => undefined;
  }

  private retry(): void {
    if (this.stopped) return;
    this.on.state('reconnecting');
    const delay = Math.min(10_000, 500 * 2 ** this.attempt);
    this.attempt++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), delay);
  }
}
