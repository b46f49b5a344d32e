import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

/*
 * What a web chat attachment may be, judged by its bytes: the declared type
 * (a browser's guess from the file's name) is never enough. Pure functions.
 */

/** The types a web chat takes: pictures a browser shows safely, and documents. Never SVG or HTML (they can script). */
export const ATTACHMENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

const EXTENSION: Record<AttachmentType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
};

const starts = (b: Buffer, sig: number[] | string, at = 0) => {
  const s = typeof sig === 'string' ? Buffer.from(sig, 'latin1') : Buffer.from(sig);
  return b.length >= at + s.length && b.subarray(at, at + s.length).equals(s);
};

/** The type the bytes are, among those a web chat takes; null for anything else. */
export function sniffAttachmentType(b: Buffer): AttachmentType | null {
  if (starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts(b, 'GIF87a') || starts(b, 'GIF89a')) return 'image/gif';
  if (starts(b, 'RIFF') && starts(b, 'WEBP', 8)) return 'image/webp';
  if (starts(b, '%PDF-')) return 'application/pdf';
  if (starts(b, [0x50, 0x4b, 0x03, 0x04])) {
    // An Office Open XML file is a zip with [Content_Types].xml and its application's folder.
    if (!b.includes('[Content_Types].xml', 0, 'latin1')) return null;
    if (b.includes('word/', 0, 'latin1')) return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    if (b.includes('xl/', 0, 'latin1')) return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    if (b.includes('ppt/', 0, 'latin1')) return 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
    return null;
  }
  return isPlainText(b) ? 'text/plain' : null;
}

/** UTF-8 without control characters other than tab, line feed, form feed and carriage return; not markup. */
function isPlainText(b: Buffer): boolean {
  if (b.length === 0) return false;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text)) return false;
  // A page or an SVG saved as .txt is still refused: browsers may be talked into rendering it.
  return !/^\s*<(?:!doctype|html|svg|\?xml|script)/i.test(text);
}

/** `image` for pictures, `document` for the rest: the message's content type. */
export const attachmentKind = (t: AttachmentType): 'image' | 'document' => (t.startsWith('image/') ? 'image' : 'document');

/** A file name to show and to download as: no folders, no control characters, at most 120 characters, with the type's extension. */
export function safeFilename(name: string | undefined, type: AttachmentType): string {
  const ext = EXTENSION[type];
  // eslint-disable-next-line no-control-regex
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f"]/g, '').trim().slice(0, 120);
  if (base === '' || base.startsWith('.')) return `attachment.${ext}`;
  return base.toLowerCase().endsWith(`.${ext}`) || (ext === 'jpg' && /\.jpe?g$/i.test(base)) ? base : `${base}.${ext}`;
}

export const newAttachmentId = (): string => `wca_${randomBytes(16).toString('hex')}`;
export const ATTACHMENT_ID_PATTERN = /^wca_[0-9a-f]{32}$/;

/**
 * The checked file: its type read from its bytes, which must be a type a web
 * chat takes and agree with the declared one (when one is declared); at most
 * `maxBytes`. Refusals: 413 `attachment_too_large`, 415 `unsupported_attachment_type`
 * or `attachment_type_mismatch`, 400 for an empty file.
 */
export function checkAttachment(bytes: Buffer, declared: string | undefined, filename: string | undefined, maxBytes: number): { mimeType: AttachmentType; filename: string; kind: 'image' | 'document' } {
  if (bytes.length === 0) throw new AppError(400, 'validation_failed', 'the file is empty', [{ field: 'body.data', message: 'the file is empty' }]);
  if (bytes.length > maxBytes) throw new AppError(413, 'attachment_too_large', `an attachment is at most ${maxBytes} bytes`, { maxBytes, size: bytes.length });
  const found = sniffAttachmentType(bytes);
  if (found === null) {
    throw new AppError(415, 'unsupported_attachment_type', `a web chat takes pictures (PNG, JPEG, GIF, WebP) and documents (PDF, plain text, Word, Excel, PowerPoint); this file is none of them`, { accepted: ATTACHMENT_TYPES });
  }
  const d = declared?.split(';')[0]?.trim().toLowerCase();
  // A browser declares what the name suggests; nothing declared (or a generic type) is judged by the bytes alone.
  if (d !== undefined && d !== '' && d !== 'application/octet-stream' && d !== found && !(d === 'image/jpg' && found === 'image/jpeg')) {
    throw new AppError(415, 'attachment_type_mismatch', `the file is declared ${d} but its content is ${found}`, { declared: d, found });
  }
  return { mimeType: found, filename: safeFilename(filename, found), kind: attachmentKind(found) };
}
