/*
 * The widget's side of the visitor API (/webchat/v1 on the service that
 * served the script): the visitor's start, history, sends, and the live
 * connection, a WebSocket or, when that cannot open, a long poll.
 */

export interface WidgetSettings {
  color?: string;
  title?: string;
  greeting?: string;
  position?: 'right' | 'left';
  preChatForm?: boolean;
}

export interface VisitorMessage {
  id: string;
  from: 'visitor' | 'agent' | 'bot' | 'system';
  type: string;
  text: string;
  at: string;
  attachment?: { id: string; mimeType: string; filename: string };
}

export interface Started {
  visitorId: string;
  token: string;
  verified: boolean;
  name: string | null;
  unreadCount: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class VisitorApi {
  constructor(
    readonly base: string,
    readonly channelId: string,
  ) {}

  token: string | null = null;

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.token !== null) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${this.base}/webchat/v1/channels/${encodeURIComponent(this.channelId)}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      signal,
    });
    const text = await res.text();
    const json = text === '' ? {} : JSON.parse(text);
    if (!res.ok) throw new ApiError(res.status, json?.error?.code ?? 'error', json?.error?.message ?? `HTTP ${res.status}`);
    return json as T;
  }

  config(): Promise<{ name: string; widget: WidgetSettings }> {
    return this.call('GET', '/config');
  }

  start(body: { token?: string; userId?: string; userHash?: string; name?: string; email?: string }): Promise<Started> {
    return this.call('POST', '/visitors', body);
  }

  history(): Promise<{ messages: VisitorMessage[]; unreadCount: number }> {
    return this.call('GET', '/messages');
  }

  send(text: string, clientId: string): Promise<{ message: VisitorMessage }> {
    return this.call('POST', '/messages', { text, clientId });
  }

  attach(data: string, mimeType: string, filename: string, clientId: string, caption?: string): Promise<{ message: VisitorMessage }> {
    return this.call('POST', '/attachments', { data, filename, clientId, ...(mimeType === '' ? {} : { mimeType }), ...(caption === undefined ? {} : { caption }) });
  }

  /** A file of the visitor's conversation, read with their token (no cookie, so never a plain link). */
  async file(id: string): Promise<Blob> {
    const res = await fetch(`${this.base}/webchat/v1/channels/${encodeURIComponent(this.channelId)}/attachments/${encodeURIComponent(id)}`, {
      headers: { Authorization: `Bearer ${this.token ?? ''}` },
      credentials: 'omit',
    });
    if (!res.ok) throw new ApiError(res.status, 'error', `HTTP ${res.status}`);
    return res.blob();
  }

  read(): Promise<unknown> {
    return this.call('POST', '/read');
  }

  typing(): Promise<unknown> {
    return this.call('POST', '/typing');
  }

  poll(after: string | undefined, signal: AbortSignal): Promise<{ messages: VisitorMessage[]; unreadCount: number; typing: boolean }> {
    return this.call('GET', `/poll?wait=25${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`, undefined, signal);
  }

  socketUrl(): string {
    return `${this.base.replace(/^http/, 'ws')}/webchat/v1/socket?channel=${encodeURIComponent(this.channelId)}&token=${encodeURIComponent(this.token ?? '')}`;
  }
}

/** What the visitor's socket says. */
type ServerFrame =
  | { type: 'message'; message: VisitorMessage }
  | { type: 'typing' }
  | { type: 'ack'; clientId: string | null; message: VisitorMessage }
  | { type: 'error'; clientId?: string | null; error?: { code?: string; message?: string } }
  | { type: 'welcome' | 'read' };

export type LiveEvent = { type: 'message'; message: VisitorMessage } | { type: 'typing' } | { type: 'revoked' } | { type: 'mode'; mode: 'socket' | 'poll' };

/**
 * The live side: a WebSocket, reconnected with backoff; after two sockets in
 * a row fail before opening (a proxy that blocks WebSockets), a long poll
 * instead. Sends go over the socket when it is open, else by POST.
 */
export class Live {
  private ws: WebSocket | null = null;
  private stopped = false;
  private failures = 0;
  private polling: AbortController | null = null;
  private last: string | undefined;
  private pending = new Map<string, { resolve: (m: VisitorMessage) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly api: VisitorApi,
    private readonly on: (e: LiveEvent) => void,
  ) {}

  start(lastId: string | undefined): void {
    this.last = lastId;
    if (typeof WebSocket === 'undefined') return this.poll();
    this.connect();
  }

  seen(id: string): void {
    this.last = id;
  }

  private connect(): void {
    if (this.stopped) return;
    let opened = false;
    const ws = new WebSocket(this.api.socketUrl());
    this.ws = ws;
    ws.onopen = () => {
      opened = true;
      this.failures = 0;
      this.on({ type: 'mode', mode: 'socket' });
    };
    ws.onmessage = (ev) => {
      let f: ServerFrame;
      try {
        f = JSON.parse(String(ev.data)) as ServerFrame;
      } catch {
        return;
      }
      if (f.type === 'message' || f.type === 'typing') this.on(f);
      else if ((f.type === 'ack' || f.type === 'error') && typeof f.clientId === 'string') {
        const p = this.pending.get(f.clientId);
        this.pending.delete(f.clientId);
        if (f.type === 'ack') p?.resolve(f.message);
        else p?.reject(new ApiError(0, f.error?.code ?? 'error', f.error?.message ?? 'not sent'));
      }
    };
    ws.onclose = (ev) => {
      this.ws = null;
      for (const p of this.pending.values()) p.reject(new ApiError(0, 'disconnected', 'not sent'));
      this.pending.clear();
      if (this.stopped) return;
      if (ev.code === 4001) return this.on({ type: 'revoked' });
      if (!opened && ++this.failures >= 2) return this.poll();
      setTimeout(() => this.connect(), Math.min(30_000, 1000 * 2 ** Math.min(this.failures, 5)));
    };
  }

  private poll(): void {
    this.on({ type: 'mode', mode: 'poll' });
    const loop = async () => {
      let delay = 0;
      while (!this.stopped) {
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        this.polling = new AbortController();
        try {
          const r = await this.api.poll(this.last, this.polling.signal);
          if (r.typing) this.on({ type: 'typing' });
          for (const m of r.messages) this.on({ type: 'message', message: m });
          delay = 0;
        } catch (e) {
          if (e instanceof ApiError && e.status === 401) return this.on({ type: 'revoked' });
          delay = Math.min(30_000, Math.max(1000, delay * 2));
        }
      }
    };
    void loop();
  }

  send(text: string, clientId: string): Promise<VisitorMessage> {
    const ws = this.ws;
    if (ws === null || ws.readyState !== WebSocket.OPEN) return this.api.send(text, clientId).then((r) => r.message);
    return new Promise((resolve, reject) => {
      this.pending.set(clientId, { resolve, reject });
      ws.send(JSON.stringify({ type: 'message', text, clientId }));
    });
  }

  typing(): void {
    if (this.ws !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send('{"type":"typing"}');
    else void this.api.typing().catch(() => {});
  }

  read(): void {
    if (this.ws !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send('{"type":"read"}');
    else void this.api.read().catch(() => {});
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close();
    this.polling?.abort();
  }
}
