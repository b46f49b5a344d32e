import { randomBytes } from 'node:crypto';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import { buildMime, parseMime, readPayload, type GmailPart } from '../providers/mime.js';
import { googleError, type SandboxReply } from './google-errors.js';

interface StoredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  internalDate: string;
  historyId: string;
  sizeEstimate: number;
  snippet: string;
  payload: GmailPart;
  /** The message as it was received or sent (RFC 822), base64url: `format=raw` and the attachments' bytes. Absent on messages stored before it was kept. */
  raw?: string;
  /** For search: lower-cased text, from, to, subject. */
  index: { from: string; to: string; subject: string; text: string; hasAttachment: boolean };
}

const SYSTEM_LABELS = ['INBOX', 'SENT', 'DRAFT', 'SPAM', 'TRASH', 'UNREAD', 'STARRED', 'IMPORTANT', 'CATEGORY_PERSONAL', 'CATEGORY_UPDATES'];
const hexId = () => randomBytes(8).toString('hex');
const attachmentIdOf = (messageId: string, partId: string) => `ANGjd${messageId}${partId.replace(/\./g, '_')}`;

/**
 * The sandbox mailbox: Gmail API v1 (`users/me` of the signed-in sandbox
 * user) with Gmail's shapes and errors: messages list/get (search with
 * Gmail's common operators), send (raw RFC 5322, parsed into the payload
 * tree; delivered to other sandbox mailboxes), drafts, labels, modify,
 * profile. A new user's inbox starts with a few messages.
 */
export class SandboxMailbox {
  constructor(private readonly db: SandboxProviderRecords) {}

  private key(email: string, id: string): string {
    return `${email}/${id}`;
  }

  private async messages(email: string): Promise<StoredMessage[]> {
    return (await this.db.entries<StoredMessage>('sbMail', `${email}/`)).map(([, m]) => m);
  }

  private async userLabels(email: string): Promise<{ id: string; name: string }[]> {
    return (await this.db.get<{ id: string; name: string }[]>('sbLabels', email)) ?? [];
  }

  /** Stores a message from raw RFC 5322 text, with its labels; returns it. */
  async deliver(email: string, raw: string, labelIds: string[], threadId?: string, at = Date.now()): Promise<StoredMessage> {
    const id = hexId();
    const payload = parseMime(raw, (partId) => attachmentIdOf(id, partId));
    const read = readPayload(payload);
    const h = (n: string) => payload.headers.find((x) => x.name.toLowerCase() === n)?.value ?? '';
    const m: StoredMessage = {
      id,
      threadId: threadId ?? id,
      labelIds,
      internalDate: String(at),
      historyId: String(at),
      sizeEstimate: Buffer.byteLength(raw),
      snippet: read.text.replace(/\s+/g, ' ').trim().slice(0, 140),
      payload,
      raw: Buffer.from(raw, 'utf8').toString('base64url'),
      index: { from: h('from').toLowerCase(), to: `${h('to')} ${h('cc')}`.toLowerCase(), subject: h('subject').toLowerCase(), text: read.text.toLowerCase(), hasAttachment: read.attachments.length > 0 },
    };
    await this.db.put('sbMail', this.key(email, id), m);
    return m;
  }

  /** A new sandbox user's first messages. */
  async seed(email: string): Promise<void> {
    const now = Date.now();
    await this.db.put('sbLabels', email, [{ id: 'Label_1', name: 'Receipts' }]);
    const ada = ['From: Ada Lovelace <ada@example.com>', `To: ${email}`, 'Subject: Order #1042 arrived damaged', 'Message-ID: <order-1042@example.com>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset="UTF-8"', '', 'Hello, my order #1042 arrived with a cracked lid. Can you send a replacement?', ''].join('\r\n');
    await this.deliver(email, ada, ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'], undefined, now - 3_600_000);
    const receipt = [
      'From: Billing <billing@example.com>',
      `To: ${email}`,
      'Subject: =?UTF-8?B?' + Buffer.from('Your receipt — November').toString('base64') + '?=',
      'Message-ID: <receipt-11@example.com>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset="UTF-8"',
      '',
      'Thank you for your payment of EUR 42.00. The receipt is attached.',
      '--b1',
      'Content-Type: application/pdf; name="receipt-11.pdf"',
      'Content-Disposition: attachment; filename="receipt-11.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 sandbox receipt').toString('base64'),
      '--b1--',
      '',
    ].join('\r\n');
    await this.deliver(email, receipt, ['INBOX', 'Label_1', 'CATEGORY_UPDATES'], undefined, now - 7_200_000);
    const welcome = buildMime({ from: 'Sandbox Team <team@sandbox.example>', to: [email], subject: 'Welcome to your sandbox mailbox', text: 'This mailbox is a sandbox: messages you send are delivered only to other sandbox mailboxes.' });
    await this.deliver(email, welcome, ['INBOX'], undefined, now - 86_400_000);
  }

  private matches(m: StoredMessage, q: string): boolean {
    const terms = q.match(/(\S+:"[^"]*"|"[^"]*"|\S+)/g) ?? [];
    return terms.every((raw) => {
      const neg = raw.startsWith('-');
      const t = (neg ? raw.slice(1) : raw).replace(/"/g, '').toLowerCase();
      const i = t.indexOf(':');
      const op = i > 0 ? t.slice(0, i) : '';
      const v = i > 0 ? t.slice(i + 1) : t;
      let ok: boolean;
      switch (op) {
        case 'from': ok = m.index.from.includes(v); break;
        case 'to': ok = m.index.to.includes(v); break;
        case 'subject': ok = m.index.subject.includes(v); break;
        case 'is': ok = v === 'unread' ? m.labelIds.includes('UNREAD') : v === 'read' ? !m.labelIds.includes('UNREAD') : v === 'starred' ? m.labelIds.includes('STARRED') : v === 'important' ? m.labelIds.includes('IMPORTANT') : false; break;
        case 'in':
        case 'label': ok = m.labelIds.some((l) => l.toLowerCase() === v) || v === 'anywhere'; break;
        case 'has': ok = v === 'attachment' ? m.index.hasAttachment : false; break;
        case 'after':
        case 'before':
        case 'newer_than':
        case 'older_than': {
          const t0 = Number(m.internalDate);
          let edge: number;
          if (op === 'newer_than' || op === 'older_than') {
            const n = /^(\d+)([dmy])$/.exec(v);
            edge = n ? Date.now() - Number(n[1]) * { d: 86_400_000, m: 30 * 86_400_000, y: 365 * 86_400_000 }[n[2] as 'd' | 'm' | 'y'] : NaN;
          } else edge = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v.replace(/\//g, '-'));
          ok = Number.isNaN(edge) ? false : op === 'after' || op === 'newer_than' ? t0 >= edge : t0 < edge;
          break;
        }
        default: ok = `${m.index.subject} ${m.index.from} ${m.index.to} ${m.index.text}`.includes(t);
      }
      return neg ? !ok : ok;
    });
  }

  async list(email: string, q: Record<string, unknown>): Promise<SandboxReply> {
    const max = q.maxResults === undefined ? 100 : Number(q.maxResults);
    if (!Number.isInteger(max) || max < 1 || max > 500) return googleError(400, 'Invalid value for maxResults');
    const labelIds = q.labelIds === undefined ? [] : Array.isArray(q.labelIds) ? q.labelIds.map(String) : [String(q.labelIds)];
    const query = typeof q.q === 'string' ? q.q : '';
    const withSpam = q.includeSpamTrash === 'true' || /\bin:(spam|trash|anywhere)\b/i.test(query);
    const all = (await this.messages(email))
      .filter((m) => withSpam || !m.labelIds.some((l) => l === 'SPAM' || l === 'TRASH'))
      .filter((m) => labelIds.every((l) => m.labelIds.includes(l)))
      .filter((m) => !m.labelIds.includes('DRAFT') || labelIds.includes('DRAFT') || /in:drafts?/i.test(query))
      .filter((m) => query === '' || this.matches(m, query))
      .sort((a, b) => Number(b.internalDate) - Number(a.internalDate) || b.id.localeCompare(a.id));
    const start = typeof q.pageToken === 'string' && /^\d+$/.test(q.pageToken) ? Number(q.pageToken) : 0;
    const page = all.slice(start, start + max);
    return {
      status: 200,
      body: { ...(page.length > 0 ? { messages: page.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}), ...(start + max < all.length ? { nextPageToken: String(start + max) } : {}), resultSizeEstimate: all.length },
    };
  }

  async get(email: string, id: string, q: Record<string, unknown>): Promise<SandboxReply> {
    const m = await this.db.get<StoredMessage>('sbMail', this.key(email, id));
    if (m === undefined) return googleError(404, 'Requested entity was not found.');
    const format = typeof q.format === 'string' ? q.format : 'full';
    if (!['full', 'metadata', 'minimal', 'raw'].includes(format)) return googleError(400, `Invalid value at 'format' (${format})`);
    const { index: _index, payload, raw, ...rest } = m;
    if (format === 'minimal') return { status: 200, body: rest };
    if (format === 'raw') {
      if (raw === undefined) return googleError(400, 'This message was stored before the sandbox kept raw messages: format=raw is not available for it');
      return { status: 200, body: { ...rest, raw } };
    }
    if (format === 'metadata') {
      const want = q.metadataHeaders === undefined ? undefined : (Array.isArray(q.metadataHeaders) ? q.metadataHeaders : [q.metadataHeaders]).map((x) => String(x).toLowerCase());
      const headers = payload.headers.filter((h) => want === undefined || want.includes(h.name.toLowerCase()));
      return { status: 200, body: { ...rest, payload: { partId: '', mimeType: payload.mimeType, filename: '', headers, body: { size: 0 } } } };
    }
    return { status: 200, body: { ...rest, payload } };
  }

  /** `messages.attachments.get`: the bytes of an attachment the message lists, base64url, as Gmail answers. */
  async attachment(email: string, id: string, attachmentId: string): Promise<SandboxReply> {
    const m = await this.db.get<StoredMessage>('sbMail', this.key(email, id));
    if (m === undefined || m.raw === undefined) return googleError(404, 'Requested entity was not found.');
    let found: Buffer | null = null;
    // The ids are the ones `deliver` gave: parsing the same raw message again finds the same part.
    parseMime(Buffer.from(m.raw, 'base64url').toString('utf8'), (partId, data) => {
      const aid = attachmentIdOf(m.id, partId);
      if (aid === attachmentId) found = data;
      return aid;
    });
    if (found === null) return googleError(404, 'Requested entity was not found.');
    const data = found as Buffer;
    return { status: 200, body: { attachmentId, size: data.length, data: data.toString('base64url') } };
  }

  /** `threads.get`: the thread's messages, oldest first, in the format asked for. */
  async thread(email: string, threadId: string, q: Record<string, unknown>): Promise<SandboxReply> {
    const msgs = (await this.messages(email)).filter((m) => m.threadId === threadId).sort((a, b) => Number(a.internalDate) - Number(b.internalDate));
    if (msgs.length === 0) return googleError(404, 'Requested entity was not found.');
    const messages: unknown[] = [];
    for (const m of msgs) {
      const one = await this.get(email, m.id, q);
      if (one.status !== 200) return one;
      messages.push(one.body);
    }
    return { status: 200, body: { id: threadId, historyId: msgs[msgs.length - 1]!.historyId, messages } };
  }

  private decodeRaw(raw: unknown): string | null {
    if (typeof raw !== 'string' || raw === '' || !/^[A-Za-z0-9_=+/-]+$/.test(raw)) return null;
    return Buffer.from(raw, 'base64url').toString('utf8');
  }

  private recipients(payload: GmailPart): string[] {
    const all = payload.headers.filter((h) => ['to', 'cc', 'bcc'].includes(h.name.toLowerCase())).map((h) => h.value).join(',');
    return [...all.matchAll(/[^\s<>,"]+@[^\s<>,"]+/g)].map((x) => x[0].toLowerCase());
  }

  async send(email: string, body: Record<string, unknown>): Promise<SandboxReply> {
    const raw = this.decodeRaw(body?.raw);
    if (raw === null) return googleError(400, "'raw' RFC822 payload message string or uploading message via /upload/* URL required");
    let text = raw;
    if (!/^from:/im.test(raw.split(/\r?\n\r?\n/)[0] ?? '')) text = `From: ${email}\r\n${raw}`;
    const parsed = parseMime(text);
    const to = this.recipients(parsed);
    if (to.length === 0) return googleError(400, 'Invalid To header');
    const threadId = typeof body.threadId === 'string' && (await this.messages(email)).some((m) => m.threadId === body.threadId) ? body.threadId : undefined;
    // Bcc is not delivered in the headers the recipients see.
    const visible = text.replace(/^Bcc:.*\r?\n/im, '');
    const sent = await this.deliver(email, text, ['SENT'], threadId);
    for (const r of new Set(to)) {
      if ((await this.db.get('sbUsers', r)) === undefined) continue;
      if (r === email) {
        await this.db.put('sbMail', this.key(email, sent.id), { ...sent, labelIds: ['SENT', 'INBOX', 'UNREAD'] });
        continue;
      }
      await this.deliver(r, visible, ['INBOX', 'UNREAD']);
    }
    const cur = (await this.db.get<StoredMessage>('sbMail', this.key(email, sent.id)))!;
    return { status: 200, body: { id: cur.id, threadId: cur.threadId, labelIds: cur.labelIds } };
  }

  async createDraft(email: string, body: Record<string, unknown>): Promise<SandboxReply> {
    const msg = (body?.message ?? {}) as Record<string, unknown>;
    const raw = this.decodeRaw(msg.raw);
    if (raw === null) return googleError(400, 'Missing draft message');
    const threadId = typeof msg.threadId === 'string' && (await this.messages(email)).some((m) => m.threadId === msg.threadId) ? msg.threadId : undefined;
    const m = await this.deliver(email, /^from:/im.test(raw) ? raw : `From: ${email}\r\n${raw}`, ['DRAFT'], threadId);
    const id = `r${BigInt('0x' + randomBytes(7).toString('hex')).toString()}`;
    await this.db.put('sbDrafts', `${email}/${id}`, { id, messageId: m.id });
    return { status: 200, body: { id, message: { id: m.id, threadId: m.threadId, labelIds: m.labelIds } } };
  }

  async labels(email: string): Promise<SandboxReply> {
    const msgs = await this.messages(email);
    const userLabels = await this.userLabels(email);
    const count = (id: string) => ({ messagesTotal: msgs.filter((m) => m.labelIds.includes(id)).length, messagesUnread: msgs.filter((m) => m.labelIds.includes(id) && m.labelIds.includes('UNREAD')).length });
    return {
      status: 200,
      body: {
        labels: [
          ...SYSTEM_LABELS.map((id) => ({ id, name: id, type: 'system', ...count(id) })),
          ...userLabels.map((l) => ({ id: l.id, name: l.name, type: 'user', messageListVisibility: 'show', labelListVisibility: 'labelShow', ...count(l.id) })),
        ],
      },
    };
  }

  async modify(email: string, id: string, body: Record<string, unknown>): Promise<SandboxReply> {
    const m = await this.db.get<StoredMessage>('sbMail', this.key(email, id));
    if (m === undefined) return googleError(404, 'Requested entity was not found.');
    const add = Array.isArray(body?.addLabelIds) ? body.addLabelIds.map(String) : [];
    const remove = Array.isArray(body?.removeLabelIds) ? body.removeLabelIds.map(String) : [];
    if (add.length === 0 && remove.length === 0) return googleError(400, 'No label add or removes specified');
    const known = new Set([...SYSTEM_LABELS, ...(await this.userLabels(email)).map((l) => l.id)]);
    for (const l of [...add, ...remove]) if (!known.has(l)) return googleError(400, `Invalid label: ${l}`);
    if (add.includes('DRAFT') || add.includes('SENT')) return googleError(400, 'Invalid label: ' + (add.includes('DRAFT') ? 'DRAFT' : 'SENT'));
    const labelIds = [...new Set([...m.labelIds.filter((l) => !remove.includes(l)), ...add])];
    await this.db.put('sbMail', this.key(email, id), { ...m, labelIds });
    return { status: 200, body: { id: m.id, threadId: m.threadId, labelIds } };
  }

  async profile(email: string): Promise<SandboxReply> {
    const msgs = await this.messages(email);
    return { status: 200, body: { emailAddress: email, messagesTotal: msgs.length, threadsTotal: new Set(msgs.map((m) => m.threadId)).size, historyId: String(Date.now()) } };
  }
}
