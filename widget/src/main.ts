import { ApiError, Live, VisitorApi, type LiveEvent, type VisitorMessage, type WidgetSettings } from './api.js';
import { css } from './style.js';

/*
 * The web chat widget: `<script src="https://<service>/widget.js" data-channel="ch_…" async>`.
 * A launcher and a chat panel in an open shadow root (the host page's CSS
 * does not reach in), talking only to the service that served this script.
 * The visitor's token is kept in the page origin's local storage, so a
 * reload or a later visit continues the same conversation.
 */

interface Options {
  base: string;
  channelId: string;
  userId?: string;
  userHash?: string;
  name?: string;
  email?: string;
  /** The dashboard's live preview: no request at all; the look comes by postMessage from the page that frames it. */
  preview?: boolean;
}

/** What a web chat takes, by type: the service checks the bytes again. */
const ACCEPT = 'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,.docx,.xlsx,.pptx';

function scriptOptions(): Options | null {
  const el = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[data-channel][src*="widget.js"]');
  const channelId = el?.dataset.channel;
  if (el === null || el === undefined || channelId === undefined || channelId === '') return null;
  const o: Options = { base: new URL(el.src, location.href).origin, channelId };
  const d = el.dataset;
  if (d.userId !== undefined && d.userHash !== undefined) {
    o.userId = d.userId;
    o.userHash = d.userHash;
  }
  if (d.name !== undefined) o.name = d.name;
  if (d.email !== undefined) o.email = d.email;
  if (d.preview !== undefined) o.preview = true;
  return o;
}

const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
};

class Widget {
  private readonly api: VisitorApi;
  private readonly storageKey: string;
  private settings: WidgetSettings = {};
  private title = 'Chat';
  private readonly root: ShadowRoot;
  /** Everything inside the shadow root: its own font and colour, never inherited from the page. */
  private readonly frame: HTMLDivElement;
  private readonly launcher: HTMLButtonElement;
  private readonly badge: HTMLSpanElement;
  private readonly panel: HTMLDivElement;
  private readonly log: HTMLDivElement;
  private readonly form: HTMLFormElement;
  private readonly input: HTMLTextAreaElement;
  private readonly typingLine: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly fileInput: HTMLInputElement;
  private readonly ids = new Set<string>();
  private live: Live | null = null;
  private started: Promise<void> | null = null;
  private open = false;
  private unread = 0;
  private lastTyping = 0;
  private typingTimer: ReturnType<typeof setTimeout> | undefined;
  private clientSeq = 0;

  constructor(private readonly o: Options) {
    this.api = new VisitorApi(o.base, o.channelId);
    this.storageKey = `switchboard-webchat:${o.channelId}`;
    const host = h('div', { id: 'switchboard-webchat' });
    this.root = host.attachShadow({ mode: 'open' });
    this.root.append(h('style', {}, css));
    this.badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: '' });
    this.launcher = h('button', { class: 'launcher', type: 'button', 'data-testid': 'sb-launcher', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'aria-controls': 'sb-panel' }, icon(), this.badge);
    this.log = h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages', tabindex: '0' });
    this.typingLine = h('div', { class: 'typing', 'aria-live': 'polite', hidden: '' }, 'Typing…');
    this.status = h('div', { class: 'status', role: 'status' });
    this.input = h('textarea', { id: 'sb-input', rows: '1', 'data-testid': 'sb-input', 'aria-label': 'Your message', placeholder: 'Write a message…', maxlength: '4096' });
    const send = h('button', { type: 'submit', class: 'send', 'data-testid': 'sb-send', 'aria-label': 'Send' }, 'Send');
    this.fileInput = h('input', { type: 'file', accept: ACCEPT, class: 'sr', tabindex: '-1', 'aria-hidden': 'true', 'data-testid': 'sb-file' });
    const attach = h('button', { type: 'button', class: 'attach', 'data-testid': 'sb-attach', 'aria-label': 'Attach a picture or document' }, '+');
    attach.addEventListener('click', () => this.fileInput.click());
    this.fileInput.addEventListener('change', () => {
      const f = this.fileInput.files?.[0];
      this.fileInput.value = '';
      if (f !== undefined) void this.sendFile(f);
    });
    this.form = h('form', { class: 'compose' }, h('label', { for: 'sb-input', class: 'sr' }, 'Your message'), attach, this.fileInput, this.input, send);
    const close = h('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, '×');
    const heading = h('h2', { id: 'sb-title' }, this.title);
    this.panel = h('div', { id: 'sb-panel', class: 'panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'sb-title', hidden: '' }, h('header', {}, heading, close), this.log, this.typingLine, this.status, this.form);
    this.frame = h('div', { class: 'sb' }, this.panel, this.launcher);
    this.root.append(this.frame);
    document.body.append(host);

    this.launcher.addEventListener('click', () => (this.open ? this.hide() : void this.show()));
    close.addEventListener('click', () => this.hide());
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.submit();
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) {
        e.preventDefault();
        void this.submit();
      }
    });
    this.input.addEventListener('input', () => {
      const now = Date.now();
      if (now - this.lastTyping > 3000 && this.input.value !== '') {
        this.lastTyping = now;
        this.live?.typing();
      }
    });
    // The open panel keeps the keyboard: Tab cycles inside it, Escape closes it.
    this.panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        this.hide();
      } else if (e.key === 'Tab') this.trapTab(e);
    });
    if (o.preview === true) this.preview();
    else void this.boot();
  }

  /**
   * The dashboard's live preview: the panel open with a sample exchange,
   * restyled by every `switchboard-widget-preview` message from the framing
   * page of this origin. Makes no request: no config, no visitor.
   */
  private preview(): void {
    this.title = 'Chat';
    window.addEventListener('message', (e: MessageEvent) => {
      const d = e.data as { type?: string; name?: string; widget?: WidgetSettings } | null;
      if (e.origin !== location.origin || d === null || typeof d !== 'object' || d.type !== 'switchboard-widget-preview') return;
      this.settings = d.widget ?? {};
      this.title = this.settings.title ?? d.name ?? 'Chat';
      this.theme();
      this.log.textContent = '';
      this.greet();
      this.log.append(h('div', { class: 'msg visitor', 'data-testid': 'sb-message', 'data-from': 'visitor' }, 'Hi, is the blue kettle in stock?'));
      this.log.append(h('div', { class: 'msg agent', 'data-testid': 'sb-message', 'data-from': 'agent' }, 'It is! Shall I keep one for you?'));
    });
    this.theme();
    this.panel.hidden = false;
    this.frame.classList.add('open');
    this.open = true;
    this.launcher.setAttribute('aria-expanded', 'true');
    this.status.textContent = 'Preview: nothing is sent.';
    this.form.querySelectorAll('button, textarea').forEach((el) => el.setAttribute('disabled', ''));
    if (window.parent !== window) window.parent.postMessage({ type: 'switchboard-widget-preview-ready' }, location.origin);
  }

  private stored(): string | null {
    try {
      return localStorage.getItem(this.storageKey);
    } catch {
      return null;
    }
  }

  private store(token: string | null): void {
    try {
      if (token === null) localStorage.removeItem(this.storageKey);
      else localStorage.setItem(this.storageKey, token);
    } catch {
      // Storage blocked: the conversation lasts as long as the page.
    }
  }

  private async boot(): Promise<void> {
    try {
      const c = await this.api.config();
      this.settings = c.widget;
      this.title = c.widget.title ?? c.name;
    } catch {
      // Not allowed on this page (or the service is unreachable): show nothing.
      this.root.host.remove();
      return;
    }
    this.theme();
    // A returning visitor (or a signed-in user) is connected at once, for the unread count.
    if (this.stored() !== null || this.o.userId !== undefined) await this.ensureStarted().catch(() => {});
  }

  private theme(): void {
    const s = this.settings;
    const host = this.root.host as HTMLElement;
    if (s.color !== undefined) host.style.setProperty('--sb-color', s.color);
    host.setAttribute('data-position', s.position ?? 'right');
    this.root.getElementById('sb-title')!.textContent = this.title;
  }

  private ensureStarted(form?: { name?: string; email?: string }): Promise<void> {
    return (this.started ??= this.start(form).catch((e: unknown) => {
      this.started = null;
      throw e;
    }));
  }

  private async start(form?: { name?: string; email?: string }): Promise<void> {
    const body: { token?: string; userId?: string; userHash?: string; name?: string; email?: string } = {};
    const token = this.stored();
    if (token !== null) body.token = token;
    if (this.o.userId !== undefined) {
      body.userId = this.o.userId;
      body.userHash = this.o.userHash!;
    }
    const name = form?.name ?? this.o.name;
    const email = form?.email ?? this.o.email;
    if (name !== undefined && name !== '') body.name = name;
    if (email !== undefined && email !== '') body.email = email;
    const s = await this.api.start(body);
    this.api.token = s.token;
    this.store(s.token);
    const h0 = await this.api.history();
    this.log.textContent = '';
    this.ids.clear();
    this.greet();
    for (const m of h0.messages) this.add(m);
    this.setUnread(h0.unreadCount);
    this.live?.stop();
    this.live = new Live(this.api, (e) => this.onLive(e));
    this.live.start(h0.messages[h0.messages.length - 1]?.id);
    if (this.open) this.markRead();
  }

  private greet(): void {
    if (this.settings.greeting !== undefined) this.log.append(h('div', { class: 'msg agent greeting' }, this.settings.greeting));
  }

  private onLive(e: LiveEvent): void {
    if (e.type === 'message') {
      if (this.add(e.message) && e.message.from !== 'visitor') {
        this.typingLine.hidden = true;
        if (this.open && document.visibilityState === 'visible') this.markRead();
        else this.setUnread(this.unread + 1);
      }
    } else if (e.type === 'typing') {
      this.typingLine.hidden = false;
      clearTimeout(this.typingTimer);
      this.typingTimer = setTimeout(() => (this.typingLine.hidden = true), 5000);
    } else if (e.type === 'revoked') {
      // The business revoked this browser's token: start over as a new visitor.
      this.live?.stop();
      this.live = null;
      this.store(null);
      this.api.token = null;
      this.started = null;
      this.log.textContent = '';
      this.ids.clear();
      this.setUnread(0);
    }
  }

  /** Shows a message once (history, socket and the send's own answer may all carry it). */
  private add(m: VisitorMessage): boolean {
    if (this.ids.has(m.id)) return false;
    this.ids.add(m.id);
    this.live?.seen(m.id);
    const who = m.from === 'visitor' ? 'You' : m.from === 'agent' ? 'Agent' : m.from === 'bot' ? 'Bot' : 'Notice';
    const el = h('div', { class: `msg ${m.from === 'visitor' ? 'visitor' : 'agent'}`, 'data-testid': 'sb-message', 'data-from': m.from }, h('span', { class: 'sr' }, `${who}: `));
    if (m.attachment !== undefined) el.append(this.attachment(m.attachment));
    if (m.text !== '') el.append(m.attachment === undefined ? m.text : h('div', {}, m.text));
    else if (m.attachment === undefined) el.append(`[${m.type}]`);
    this.log.append(el);
    this.log.scrollTop = this.log.scrollHeight;
    return true;
  }

  private setUnread(n: number): void {
    this.unread = n;
    this.badge.hidden = n === 0;
    this.badge.textContent = n > 99 ? '99+' : String(n);
    this.launcher.setAttribute('aria-label', n === 0 ? 'Open chat' : `Open chat, ${n} unread`);
    this.launcher.dataset.unread = String(n);
  }

  private markRead(): void {
    if (this.unread === 0 && this.live === null) return;
    this.setUnread(0);
    this.live?.read();
  }

  private async show(): Promise<void> {
    this.open = true;
    this.panel.hidden = false;
    this.frame.classList.add('open');
    this.launcher.setAttribute('aria-expanded', 'true');
    this.launcher.setAttribute('aria-label', 'Close chat');
    if (this.started === null && this.stored() === null && this.o.userId === undefined && this.settings.preChatForm === true) return this.preChat();
    this.form.hidden = false;
    this.input.focus();
    try {
      await this.ensureStarted();
      this.markRead();
      this.status.textContent = '';
    } catch (e) {
      this.status.textContent = e instanceof ApiError ? e.message : 'The chat is unavailable; try again later.';
    }
  }

  private preChat(): void {
    this.form.hidden = true;
    const name = h('input', { id: 'sb-name', name: 'name', autocomplete: 'name', required: '', maxlength: '120' });
    const email = h('input', { id: 'sb-email', name: 'email', type: 'email', autocomplete: 'email', required: '', maxlength: '254' });
    const f = h(
      'form',
      { class: 'prechat' },
      h('p', {}, 'Before we start: who are we talking to?'),
      h('label', { for: 'sb-name' }, 'Name'),
      name,
      h('label', { for: 'sb-email' }, 'Email'),
      email,
      h('button', { type: 'submit', class: 'send' }, 'Start chat'),
    );
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.ensureStarted({ name: name.value.trim(), email: email.value.trim() }).then(
        () => {
          f.remove();
          this.form.hidden = false;
          this.input.focus();
        },
        (err: unknown) => (this.status.textContent = err instanceof ApiError ? err.message : 'The chat is unavailable; try again later.'),
      );
    });
    this.log.after(f);
    name.focus();
  }

  private hide(): void {
    this.open = false;
    this.panel.hidden = true;
    this.frame.classList.remove('open');
    this.launcher.setAttribute('aria-expanded', 'false');
    this.setUnread(this.unread);
    this.launcher.focus();
  }

  private trapTab(e: KeyboardEvent): void {
    const focusable = [...this.panel.querySelectorAll<HTMLElement>('button, textarea, input, [tabindex="0"]')].filter((el) => !el.closest('[hidden]') && !(el as HTMLButtonElement).disabled);
    if (focusable.length === 0) return;
    const first = focusable[0]!;
    const last = focusable[focusable.length - 1]!;
    const active = this.root.activeElement;
    if (e.shiftKey && active === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && active === last) {
      e.preventDefault();
      first.focus();
    }
  }

  private async sendFile(f: File): Promise<void> {
    this.status.textContent = `Sending ${f.name}…`;
    const clientId = `${Date.now().toString(36)}-f${(this.clientSeq++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      await this.ensureStarted();
      const data = await new Promise<string>((resolve, reject) => {
        const r = new FileReader();
        r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
        r.onerror = () => reject(new Error('unreadable'));
        r.readAsDataURL(f);
      });
      const caption = this.input.value.trim();
      const { message } = await this.api.attach(data, f.type, f.name, clientId, caption === '' ? undefined : caption);
      if (caption !== '') this.input.value = '';
      this.add(message);
      this.status.textContent = '';
    } catch (e) {
      this.status.textContent = e instanceof ApiError ? e.message : 'The file was not sent; try again.';
    }
  }

  /** A file of the conversation: a picture shown in place, a document as a download, both read with the visitor's token. */
  private attachment(a: NonNullable<VisitorMessage['attachment']>): HTMLElement {
    if (a.mimeType.startsWith('image/')) {
      const img = h('img', { alt: a.filename, 'data-testid': 'sb-attachment' });
      void this.api.file(a.id).then((b) => (img.src = URL.createObjectURL(b)), () => img.setAttribute('alt', `${a.filename} (unavailable)`));
      return img;
    }
    const link = h('a', { href: '#', class: 'file', download: a.filename, 'data-testid': 'sb-attachment' }, a.filename);
    let ready = false;
    link.addEventListener('click', (e) => {
      if (ready) return;
      e.preventDefault();
      void this.api.file(a.id).then((b) => {
        link.href = URL.createObjectURL(b);
        ready = true;
        link.click();
      });
    });
    return link;
  }

  private async submit(): Promise<void> {
    const text = this.input.value.trim();
    if (text === '' || this.o.preview === true) return;
    this.input.value = '';
    const clientId = `${Date.now().toString(36)}-${(this.clientSeq++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    try {
      await this.ensureStarted();
      const m = await this.live!.send(text, clientId);
      this.add(m);
      this.status.textContent = '';
    } catch (e) {
      // Kept for another try: the same clientId makes a retry count once.
      if (this.input.value === '') this.input.value = text;
      this.status.textContent = e instanceof ApiError ? e.message : 'Not sent; try again.';
    }
  }
}

function icon(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS(ns, 'path');
  p.setAttribute('d', 'M4 4h16v11H8l-4 4z');
  svg.append(p);
  return svg;
}

const options = scriptOptions();
if (options !== null) {
  const boot = () => new Widget(options);
  if (document.body === null) document.addEventListener('DOMContentLoaded', boot, { once: true });
  else boot();
}
