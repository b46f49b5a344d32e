// How a receiver verifies a Switchboard webhook. Plain Node.js, no dependencies.
// test/webhooks/verify-example.test.ts runs this file against real deliveries.
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * X-Signature: hex HMAC-SHA256 of the raw request body, keyed with the secret
 * string exactly as returned at registration (including "whsec_").
 * `rawBody` must be the bytes as received (a Buffer), not re-serialized JSON.
 */
export function verifyXSignature(secret, rawBody, xSignature) {
  if (!secret || typeof xSignature !== 'string' || !/^[0-9a-f]{64}$/i.test(xSignature)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(xSignature, 'hex'));
}

/**
 * Standard Webhooks: webhook-signature holds one or more space-separated
 * "v1,<base64>" values; each is HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<raw body>" keyed with the base64-decoded
 * part of the secret after "whsec_". Reject timestamps more than
 * `toleranceSeconds` away from now (replays), and remember processed
 * webhook-id values (deliveries are at least once).
 */
export function verifyStandardWebhook(secret, headers, rawBody, { toleranceSeconds = 300, now = Date.now() } = {}) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!secret || !id || !timestamp || !signatures) return false;
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  return signatures.split(' ').some((s) => {
    const [version, value] = s.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
