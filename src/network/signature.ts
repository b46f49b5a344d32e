import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * `X-Hub-Signature-256`: `sha256=` + hex HMAC-SHA256 of the exact request body
 * bytes, keyed with the app secret. Computed over the raw bytes: re-serialized
 * JSON would not match what the network signed.
 */

export const HUB_SIGNATURE_HEADER = 'x-hub-signature-256';

export function signHubSignature(appSecret: string, rawBody: Buffer | string): string {
  return 'sha256=' + createHmac('sha256', appSecret).update(rawBody).digest('hex');
}

/**
 * True only for a well-formed header whose HMAC matches. Fails closed: an
 * empty secret, a missing or malformed header never verify. The comparison
 * takes the same time wherever the bytes differ.
 */
export function verifyHubSignature(appSecret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!appSecret || !header) return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (m === null) return false;
  const given = Buffer.from(m[1]!.toLowerCase(), 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
