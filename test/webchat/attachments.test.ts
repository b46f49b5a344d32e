import { describe, expect, it } from 'vitest';
import { checkAttachment, safeFilename, sniffAttachmentType } from '../../src/webchat/attachments.js';
import { AppError } from '../../src/errors.js';

const b = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const refusal = (f: () => unknown): [number, string] => {
  try {
    f();
  } catch (e) {
    if (e instanceof AppError) return [e.status, e.code];
    throw e;
  }
  throw new Error('not refused');
};

describe('web chat attachments: what a file is, read from its bytes', () => {
  it('knows the pictures and documents a web chat takes by their signatures', () => {
    expect(sniffAttachmentType(b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'rest'))).toBe('image/png');
    expect(sniffAttachmentType(b([0xff, 0xd8, 0xff, 0xe0], 'JFIF'))).toBe('image/jpeg');
    expect(sniffAttachmentType(b('GIF89a', [1, 0, 1, 0]))).toBe('image/gif');
    expect(sniffAttachmentType(b('RIFF', [0, 0, 0, 0], 'WEBPVP8 '))).toBe('image/webp');
    expect(sniffAttachmentType(b('%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniffAttachmentType(b([0x50, 0x4b, 0x03, 0x04], '....[Content_Types].xml....word/document.xml'))).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(sniffAttachmentType(b([0x50, 0x4b, 0x03, 0x04], '[Content_Types].xml xl/workbook.xml'))).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(sniffAttachmentType(Buffer.from('Order 1042\r\nTwo kettles, one blue — ça va\n'))).toBe('text/plain');
  });

  it('refuses what can script or is not a document: SVG, HTML, a plain zip, binaries, text with control characters', () => {
    expect(sniffAttachmentType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'))).toBeNull();
    expect(sniffAttachmentType(Buffer.from('  <!DOCTYPE html><html></html>'))).toBeNull();
    expect(sniffAttachmentType(Buffer.from('<?xml version="1.0"?><svg/>'))).toBeNull();
    expect(sniffAttachmentType(b([0x50, 0x4b, 0x03, 0x04], 'evil.exe'))).toBeNull();
    expect(sniffAttachmentType(b('MZ', [0x90, 0, 3, 0]))).toBeNull();
    expect(sniffAttachmentType(b('text', [0x00], 'more'))).toBeNull();
    expect(sniffAttachmentType(b([0xc3, 0x28]))).toBeNull();
    expect(sniffAttachmentType(Buffer.alloc(0))).toBeNull();
  });

  it('checks size, type and the declared type; names files safely', () => {
    const png = b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'x');
    expect(checkAttachment(png, 'image/png', 'C:\\photos\\part.png', 1024)).toEqual({ mimeType: 'image/png', filename: 'part.png', kind: 'image' });
    expect(checkAttachment(png, undefined, undefined, 1024)).toEqual({ mimeType: 'image/png', filename: 'attachment.png', kind: 'image' });
    expect(checkAttachment(png, 'application/octet-stream', 'part', 1024).filename).toBe('part.png');
    expect(checkAttachment(b('%PDF-1.4'), 'application/pdf; charset=binary', 'a.pdf', 1024).kind).toBe('document');
    expect(refusal(() => checkAttachment(png, 'application/pdf', 'x.pdf', 1024))).toEqual([415, 'attachment_type_mismatch']);
    expect(refusal(() => checkAttachment(Buffer.from('<html>'), 'text/plain', 'a.txt', 1024))).toEqual([415, 'unsupported_attachment_type']);
    expect(refusal(() => checkAttachment(Buffer.concat([png, Buffer.alloc(2000)]), 'image/png', 'x.png', 1024))).toEqual([413, 'attachment_too_large']);
    expect(refusal(() => checkAttachment(Buffer.alloc(0), 'image/png', 'x.png', 1024))).toEqual([400, 'validation_failed']);
    expect(safeFilename('../../etc/passwd', 'text/plain')).toBe('passwd.txt');
    expect(safeFilename('.htaccess', 'text/plain')).toBe('attachment.txt');
    expect(safeFilename('photo.JPEG', 'image/jpeg')).toBe('photo.JPEG');
    expect(safeFilename('a"b\u0007.pdf', 'application/pdf')).toBe('ab.pdf');
  });
});
