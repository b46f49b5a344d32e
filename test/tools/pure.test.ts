import { describe, expect, it } from 'vitest';
import { buildMime, parseMime, readPayload } from '../../src/tools/providers/mime.js';
import { stripeForm, stripeSignature, verifyStripeSignature } from '../../src/tools/providers/stripe.js';
import { formatInZone, toEpoch, wallTimeToEpoch } from '../../src/tools/providers/timezone.js';

describe('MIME: built as Gmail takes it, parsed as Gmail gives it back', () => {
  it('round-trips non-ASCII subjects and bodies, multipart/alternative, threading headers', () => {
    const raw = buildMime({ to: ['Zoë <zoe@example.com>'], cc: ['b@example.com'], subject: 'Grüße, Zoë', text: 'Hallo — schön', html: '<p>Hallo — <b>schön</b></p>', inReplyTo: '<m1@x>', references: '<m0@x> <m1@x>' });
    const p = parseMime(raw);
    const h = (n: string) => p.headers.find((x) => x.name === n)?.value;
    expect(h('Subject')).toBe('Grüße, Zoë');
    expect(h('To')).toBe('Zoë <zoe@example.com>');
    expect(h('In-Reply-To')).toBe('<m1@x>');
    expect(p.mimeType).toBe('multipart/alternative');
    expect(readPayload(p)).toMatchObject({ text: 'Hallo — schön', html: '<p>Hallo — <b>schön</b></p>', attachments: [] });
  });

  it('strips line breaks from header values (no header injection)', () => {
    const raw = buildMime({ to: ['a@example.com'], subject: 'Hi\r\nBcc: victim@example.com', text: 'x' });
    expect(parseMime(raw).headers.filter((x) => x.name.toLowerCase() === 'bcc')).toEqual([]);
  });

  it('lists attachments and decodes quoted-printable; HTML alone becomes text', () => {
    const raw = ['Subject: a', 'Content-Type: multipart/mixed; boundary=XX', '', '--XX', 'Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable', '', '<p>Caf=C3=A9 &amp; more</p>', '--XX', 'Content-Type: image/png', 'Content-Disposition: attachment; filename="a.png"', 'Content-Transfer-Encoding: base64', '', 'iVBORw0KGgo=', '--XX--', ''].join('\r\n');
    const r = readPayload(parseMime(raw, (partId) => `att-${partId}`));
    expect(r.text).toBe('Café & more');
    expect(r.attachments).toEqual([{ partId: '1', filename: 'a.png', mimeType: 'image/png', size: 8, attachmentId: 'att-1' }]);
  });
});

describe('Stripe: form encoding and webhook signatures', () => {
  it('encodes nested params in bracket notation', () => {
    expect(stripeForm({ line_items: [{ price_data: { currency: 'eur', unit_amount: 100 } }], metadata: { a: 'b' }, x: undefined }).toString()).toBe(
      'line_items%5B0%5D%5Bprice_data%5D%5Bcurrency%5D=eur&line_items%5B0%5D%5Bprice_data%5D%5Bunit_amount%5D=100&metadata%5Ba%5D=b',
    );
  });

  it('verifies t/v1 signatures on the raw bytes, in the tolerance, failing closed', () => {
    const body = Buffer.from('{"id":"evt_1"}');
    const now = 1_800_000_000;
    const good = stripeSignature('whsec_a', body, now);
    expect(verifyStripeSignature('whsec_a', body, good, now)).toBe(true);
    expect(verifyStripeSignature('whsec_a', body, `${good},v1=${'0'.repeat(64)}`, now)).toBe(true);
    expect(verifyStripeSignature('whsec_b', body, good, now)).toBe(false);
    expect(verifyStripeSignature('whsec_a', Buffer.from('{"id":"evt_2"}'), good, now)).toBe(false);
    expect(verifyStripeSignature('whsec_a', body, good, now + 301)).toBe(false);
    expect(verifyStripeSignature('', body, good, now)).toBe(false);
    expect(verifyStripeSignature('whsec_a', body, undefined, now)).toBe(false);
    expect(verifyStripeSignature('whsec_a', body, `t=${now}`, now)).toBe(false);
  });
});

describe('time zones', () => {
  it('reads wall-clock times in their zone across daylight saving changes', () => {
    expect(new Date(wallTimeToEpoch('2027-01-15T10:00:00', 'Europe/Berlin')).toISOString()).toBe('2027-01-15T09:00:00.000Z');
    expect(new Date(wallTimeToEpoch('2027-07-15T10:00:00', 'Europe/Berlin')).toISOString()).toBe('2027-07-15T08:00:00.000Z');
    expect(new Date(wallTimeToEpoch('2027-03-14T03:30:00', 'America/New_York')).toISOString()).toBe('2027-03-14T07:30:00.000Z');
    expect(formatInZone(Date.parse('2027-07-15T08:00:00Z'), 'Europe/Berlin')).toBe('2027-07-15T10:00:00+02:00');
    expect(formatInZone(Date.parse('2027-01-15T09:30:00Z'), 'Asia/Kolkata')).toBe('2027-01-15T15:00:00+05:30');
    expect(toEpoch('2027-01-15T10:00:00+01:00', undefined)).toBe(Date.parse('2027-01-15T09:00:00Z'));
    expect(Number.isNaN(toEpoch('2027-01-15T10:00:00', undefined))).toBe(true);
  });
});
