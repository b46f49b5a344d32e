import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyStandardWebhook, verifyXSignature } from '../../docs/examples/verify-webhook.mjs';
import { generateSecret, signRequest } from '../../src/webhooks/index.js';

describe('the documented receiver code', () => {
  it('is printed verbatim in docs/webhooks.md', () => {
    const readme = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../../docs/examples/verify-webhook.mjs', import.meta.url), 'utf8');
    expect(readme).toContain(example);
  });

  it('accepts what the service signs and rejects tampering, other secrets and stale timestamps', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ id: 'e1', type: 'ticket.created', createdAt: new Date().toISOString(), organizationId: 'o', data: { a: 'ü' } });
    const now = Date.now();
    const h = signRequest([secret], 'e1', Math.floor(now / 1000), body);
    const raw = Buffer.from(body, 'utf8');
    expect(verifyXSignature(secret, raw, h['x-signature'])).toBe(true);
    expect(verifyStandardWebhook(secret, { ...h }, raw)).toBe(true);
    const tampered = Buffer.from(body.replace('ticket', 'tickey'));
    expect(verifyXSignature(secret, tampered, h['x-signature'])).toBe(false);
    expect(verifyStandardWebhook(secret, { ...h }, tampered)).toBe(false);
    expect(verifyXSignature(generateSecret(), raw, h['x-signature'])).toBe(false);
    expect(verifyStandardWebhook(generateSecret(), { ...h }, raw)).toBe(false);
    expect(verifyXSignature('', raw, h['x-signature'])).toBe(false);
    expect(verifyXSignature(secret, raw, undefined)).toBe(false);
    expect(verifyStandardWebhook(secret, { ...h }, raw, { now: now + 10 * 60_000 })).toBe(false);
  });
});
