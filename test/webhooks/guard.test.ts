import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { blockedReason, checkWebhookUrl, judge, nextAttemptAt, parseRetryAfter, retryDelayMs, WebhookHttpClient, type HttpOutcome } from '../../src/webhooks/index.js';

const strict = { allowLoopback: false };
const dev = { allowLoopback: true };

describe('address guard', () => {
  it('refuses loopback, private, link-local, CGNAT, unique-local and IPv4-mapped addresses', () => {
    for (const ip of ['127.0.0.1', '127.9.9.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:8.8.8.8', '64:ff9b::a00:1', '2002:a00:1::']) {
      expect(blockedReason(ip, strict), ip).not.toBeNull();
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111']) {
      expect(blockedReason(ip, strict), ip).toBeNull();
    }
    expect(blockedReason('127.0.0.1', dev)).toBeNull();
    expect(blockedReason('::1', dev)).toBeNull();
    // The development flag opens loopback only.
    expect(blockedReason('10.0.0.1', dev)).not.toBeNull();
    expect(blockedReason('::ffff:127.0.0.1', dev)).not.toBeNull();
  });

  it('checks receiver URLs', () => {
    expect(checkWebhookUrl('https://hooks.example.com/x?y=1', strict).ok).toBe(true);
    expect(checkWebhookUrl('http://hooks.example.com/x', strict)).toMatchObject({ ok: false, reason: /https/ });
    expect(checkWebhookUrl('http://127.0.0.1:9/x', dev).ok).toBe(true);
    expect(checkWebhookUrl('http://example.com/x', dev)).toMatchObject({ ok: false, reason: /loopback/ });
    expect(checkWebhookUrl('gopher://example.com', strict).ok).toBe(false);
    expect(checkWebhookUrl('https://a:b@example.com', strict)).toMatchObject({ ok: false, reason: /credentials/ });
    expect(checkWebhookUrl('https://' + 'a'.repeat(2100) + '.com', strict).ok).toBe(false);
    expect(checkWebhookUrl('https://[fe80::1]/', strict).ok).toBe(false);
    expect(checkWebhookUrl('https://LOCALHOST./', strict).ok).toBe(false);
  });
});

describe('WebhookHttpClient SSRF guard at connection time', () => {
  it('refuses a host name that resolves to a forbidden address, without connecting', async () => {
    const client = new WebhookHttpClient({ policy: strict, timeoutMs: 2000, resolver: async () => [{ address: '10.20.30.40', family: 4 }] });
    const o = await client.post('https://internal.example/hook', '{}', {});
    expect(o).toMatchObject({ status: null, forbidden: true });
    expect(o.error).toMatch(/10\.20\.30\.40 is in the private range/);
    client.close();
  });

  it('checks the address actually connected to: a name that rebinds to loopback is refused although a literal check passed', async () => {
    let hits = 0;
    const srv = createServer((_req, res) => { hits++; res.end('ok'); });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    try {
      // The URL's host is a name; it "rebinds" to 127.0.0.1 when the socket resolves it.
      const client = new WebhookHttpClient({ policy: strict, timeoutMs: 2000, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
      const o = await client.post(`https://rebind.example:${port}/hook`, '{}', {});
      expect(o.forbidden).toBe(true);
      expect(o.error).toMatch(/loopback/);
      // Only allowed addresses of a mixed answer are used.
      const mixed = new WebhookHttpClient({ policy: dev, timeoutMs: 2000, resolver: async () => [{ address: '10.0.0.1', family: 4 }, { address: '127.0.0.1', family: 4 }] });
      const ok = await mixed.post(`http://mixed.example:${port}/hook`, '{}', {});
      expect(ok.status).toBe(200);
      expect(hits).toBe(1);
      client.close();
      mixed.close();
    } finally {
      srv.close();
    }
  });

  it('does not follow redirects', async () => {
    let followed = 0;
    const srv = createServer((req, res) => {
      if (req.url === '/target') followed++;
      res.writeHead(302, { location: '/target' }).end();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    const client = new WebhookHttpClient({ policy: dev, timeoutMs: 2000 });
    const o = await client.post(`http://127.0.0.1:${port}/hook`, '{}', {});
    expect(o.status).toBe(302);
    expect(followed).toBe(0);
    client.close();
    srv.close();
  });
});

describe('retry policy', () => {
  const o = (p: Partial<HttpOutcome>): HttpOutcome => ({ status: null, latencyMs: 1, error: null, forbidden: false, retryAfterMs: null, body: '', ...p });
  it('classifies outcomes', () => {
    expect(judge(o({ status: 204 })).kind).toBe('succeeded');
    expect(judge(o({ status: 500 })).kind).toBe('retry');
    expect(judge(o({ status: 503 })).kind).toBe('retry');
    expect(judge(o({ status: 429, retryAfterMs: 7000 }))).toMatchObject({ kind: 'retry', retryAfterMs: 7000 });
    expect(judge(o({ status: 408 })).kind).toBe('retry');
    expect(judge(o({ error: 'timed out after 15000 ms' })).kind).toBe('retry');
    expect(judge(o({ error: 'connection refused' })).kind).toBe('retry');
    expect(judge(o({ status: 301 })).kind).toBe('failed');
    expect(judge(o({ status: 404 })).kind).toBe('failed');
    expect(judge(o({ status: 410 })).kind).toBe('disable');
    expect(judge(o({ error: 'forbidden address', forbidden: true })).kind).toBe('failed');
  });

  it('backs off exponentially with jitter for about three days, honouring Retry-After', () => {
    const s = { baseMs: 5000, maxDelayMs: 6 * 3600_000, windowMs: 72 * 3600_000 };
    expect(retryDelayMs(1, s, null, () => 0.5)).toBe(5000);
    expect(retryDelayMs(2, s, null, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(3, s, null, () => 0)).toBe(16_000);
    expect(retryDelayMs(3, s, null, () => 1)).toBe(24_000);
    expect(retryDelayMs(40, s, null, () => 0.5)).toBe(6 * 3600_000);
    expect(retryDelayMs(1, s, 120_000, () => 0.5)).toBe(120_000);
    // Simulate a receiver down for good: attempts stop at the window, the last one at its end.
    let now = 0;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(now, retryDelayMs(attempts, s, null, () => 0.5), s.windowMs);
      if (next === null) break;
      now = next;
      attempts++;
    }
    expect(now).toBe(s.windowMs);
    expect(attempts).toBeGreaterThan(15);
    expect(attempts).toBeLessThan(30);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('30')).toBe(30_000);
    expect(parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(55_000);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
  });
});
