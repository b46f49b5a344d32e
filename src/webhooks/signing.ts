import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook request signing. Two signatures over the same raw body bytes:
 *
 * - `X-Signature`: hex HMAC-SHA256 of the raw body, keyed with the
 *   registration's secret string exactly as returned (UTF-8 bytes, `whsec_`
 *   prefix included).
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 *   `webhook-signature`): `v1,` + base64 HMAC-SHA256 of
 *   `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64-decoded
 *   part of the secret after `whsec_`. Space-separated when more than one
 *   secret is valid (right after a rotation).
 */

const PREFIX = 'whsec_';

/** A new registration secret: `whsec_` + base64 of 24 random bytes. */
export function generateSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

export function xSignature(secret: string, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

function standardKey(secret: string): Buffer {
  const raw = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  const key = Buffer.from(raw, 'base64');
  if (key.length === 0) throw new Error('empty webhook secret');
  return key;
}

export function standardSignature(secret: string, msgId: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', standardKey(secret));
  mac.update(`${msgId}.${timestampSeconds}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

export interface SignedHeaders {
  'content-type': string;
  'x-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Headers of one attempt. `secrets[0]` is the current secret (the only one
 * behind `X-Signature`); any others are still-valid previous secrets.
 */
export function signRequest(secrets: string[], msgId: string, timestampSeconds: number, body: string): SignedHeaders {
  const current = secrets[0];
  if (current === undefined || current === '') throw new Error('no webhook secret');
  return {
    'content-type': 'application/json',
    'x-signature': xSignature(current, body),
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => standardSignature(s, msgId, timestampSeconds, body)).join(' '),
  };
}

/** Constant-time check of an `X-Signature` header (for receivers and tests); fails closed on empty input. */
export function verifyXSignature(secret: string, rawBody: string | Buffer, header: string | undefined): boolean {
  if (!secret || !header || !/^[0-9a-f]{64}$/i.test(header)) return false;
  const expected = Buffer.from(xSignature(secret, rawBody), 'hex');
  return timingSafeEqual(expected, Buffer.from(header, 'hex'));
}
