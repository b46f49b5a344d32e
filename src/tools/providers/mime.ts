import { randomBytes } from 'node:crypto';

/*
 * Internet messages (RFC 5322 + MIME, RFC 2045-2047) as Gmail takes them in
 * `raw` and gives them back as a `payload` tree. Pure functions.
 */

export interface OutgoingMail {
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  text: string;
  html?: string;
  inReplyTo?: string;
  references?: string;
  from?: string;
}

/** An RFC 2047 encoded-word when the text is not plain ASCII (subjects, display names). */
export function encodeHeaderText(v: string): string {
  return /^[\x20-\x7e]*$/.test(v) ? v : `=?UTF-8?B?${Buffer.from(v, 'utf8').toString('base64')}?=`;
}

/** Header values must not carry line breaks (header injection). */
function clean(v: string): string {
  return v.replace(/[\r\n]+/g, ' ');
}

function base64Lines(s: string): string {
  return (Buffer.from(s, 'utf8').toString('base64').match(/.{1,76}/g) ?? ['']).join('\r\n');
}

/** The RFC 5322 message Gmail's `messages.send` and `drafts.create` take (base64url in `raw`). */
export function buildMime(m: OutgoingMail): string {
  const h: string[] = [];
  if (m.from) h.push(`From: ${clean(m.from)}`);
  h.push(`To: ${m.to.map(clean).join(', ')}`);
  if (m.cc && m.cc.length > 0) h.push(`Cc: ${m.cc.map(clean).join(', ')}`);
  if (m.bcc && m.bcc.length > 0) h.push(`Bcc: ${m.bcc.map(clean).join(', ')}`);
  h.push(`Subject: ${encodeHeaderText(clean(m.subject))}`);
  if (m.inReplyTo) h.push(`In-Reply-To: ${clean(m.inReplyTo)}`);
  if (m.references) h.push(`References: ${clean(m.references)}`);
  h.push(`Date: ${new Date().toUTCString().replace('GMT', '+0000')}`);
  h.push('MIME-Version: 1.0');
  const textPart = ['Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: base64', '', base64Lines(m.text)].join('\r\n');
  if (m.html === undefined) return [...h, textPart].join('\r\n');
  const boundary = `sb_${randomBytes(12).toString('hex')}`;
  const htmlPart = ['Content-Type: text/html; charset="UTF-8"', 'Content-Transfer-Encoding: base64', '', base64Lines(m.html)].join('\r\n');
  return [...h, `Content-Type: multipart/alternative; boundary="${boundary}"`, '', `--${boundary}`, textPart, `--${boundary}`, htmlPart, `--${boundary}--`, ''].join('\r\n');
}

/** A node of Gmail's `payload` (users.messages resource, format=full). */
export interface GmailPart {
  partId: string;
  mimeType: string;
  filename: string;
  headers: { name: string; value: string }[];
  body: { size: number; data?: string; attachmentId?: string };
  parts?: GmailPart[];
}

function decodeWords(v: string): string {
  return v.replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g, (_m, _cs: string, enc: string, text: string) => {
    if (enc.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
    return Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
  });
}

function splitHeaders(block: string): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && out.length > 0) out[out.length - 1]!.value += ' ' + line.trim();
    else {
      const i = line.indexOf(':');
      if (i > 0) out.push({ name: line.slice(0, i).trim(), value: line.slice(i + 1).trim() });
    }
  }
  return out.map((x) => ({ name: x.name, value: decodeWords(x.value) }));
}

function param(value: string, name: string): string | undefined {
  const m = new RegExp(`${name}\\*?=("([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return m ? (m[2] ?? m[3]) : undefined;
}

function decodeBody(body: string, encoding: string | undefined): Buffer {
  const enc = (encoding ?? '7bit').toLowerCase();
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (enc === 'quoted-printable') {
    const s = body.replace(/=\r?\n/g, '');
    const bytes: number[] = [];
    for (let i = 0; i < s.length; i++) {
      if (s[i] === '=' && /^[0-9A-F]{2}$/i.test(s.slice(i + 1, i + 3))) {
        bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(s.charCodeAt(i) & 0xff);
    }
    return Buffer.from(bytes);
  }
  return Buffer.from(body, 'utf8');
}

/**
 * Parses an RFC 5322 message into Gmail's payload tree (as Gmail does for
 * `raw` sends): multipart bodies become `parts`, leaf bodies are decoded
 * and given back base64url in `body.data`, and parts with a filename are
 * attachments (`attachmentId` from `attachmentIdFor`, data kept apart).
 */
export function parseMime(raw: string, attachmentIdFor: (partId: string, data: Buffer) => string = () => ''): GmailPart {
  const walk = (text: string, partId: string): GmailPart => {
    const sep = /\r?\n\r?\n/.exec(text);
    const headBlock = sep ? text.slice(0, sep.index) : text;
    const body = sep ? text.slice(sep.index + sep[0].length) : '';
    const headers = splitHeaders(headBlock);
    const get = (n: string) => headers.find((x) => x.name.toLowerCase() === n)?.value;
    const ctype = get('content-type') ?? 'text/plain; charset="us-ascii"';
    const mimeType = ctype.split(';')[0]!.trim().toLowerCase();
    const disposition = get('content-disposition') ?? '';
    const filename = param(disposition, 'filename') ?? param(ctype, 'name') ?? '';
    if (mimeType.startsWith('multipart/')) {
      const boundary = param(ctype, 'boundary');
      const chunks = boundary === undefined ? [] : body.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?\\n?`)).slice(1, -1);
      const parts = chunks.filter((c) => c.trim() !== '').map((c, i) => walk(c, partId === '' ? String(i) : `${partId}.${i}`));
      return { partId, mimeType, filename: '', headers, body: { size: 0 }, parts };
    }
    const data = decodeBody(body, get('content-transfer-encoding'));
    if (filename !== '') return { partId, mimeType, filename, headers, body: { size: data.length, attachmentId: attachmentIdFor(partId, data) } };
    return { partId, mimeType, filename: '', headers, body: { size: data.length, data: data.toString('base64url') } };
  };
  return walk(raw, '');
}

/** What a reader wants from a payload tree: the text and HTML bodies, and the attachments listed. */
export function readPayload(p: GmailPart): { text: string; html: string | null; attachments: { partId: string; filename: string; mimeType: string; size: number; attachmentId: string }[] } {
  let text: string | null = null;
  let html: string | null = null;
  const attachments: { partId: string; filename: string; mimeType: string; size: number; attachmentId: string }[] = [];
  const visit = (part: GmailPart) => {
    if (part.parts) return part.parts.forEach(visit);
    if (part.filename !== '' || part.body.attachmentId) {
      attachments.push({ partId: part.partId, filename: part.filename, mimeType: part.mimeType, size: part.body.size, attachmentId: part.body.attachmentId ?? '' });
      return;
    }
    const content = part.body.data === undefined ? '' : Buffer.from(part.body.data, 'base64url').toString('utf8');
    if (part.mimeType === 'text/plain' && text === null) text = content;
    else if (part.mimeType === 'text/html' && html === null) html = content;
  };
  visit(p);
  const plainFromHtml = (h: string) => h.replace(/<style[\s\S]*?<\/style>/gi, '').replace(/<br\s*\/?>/gi, '\n').replace(/<\/p>/gi, '\n\n').replace(/<[^>]+>/g, '').replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').trim();
  return { text: text ?? (html !== null ? plainFromHtml(html) : ''), html, attachments };
}
