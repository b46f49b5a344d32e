import { afterEach, describe, expect, it } from 'vitest';
import { eventually, waitFor } from '../events/contract.js';
import { startReceiver, type TestReceiver } from './receiver.js';
import { startHarness, type Harness } from './setup.js';

let harness: Harness | undefined;
const receivers: TestReceiver[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const r of receivers.splice(0)) await r.close();
});
async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

describe('webhook delivery', () => {
  it('delivers every event to every matching registration, signed both ways, with the documented body', async () => {
    harness = await startHarness();
    const all = await receiver();
    const onlyTickets = await receiver();
    const otherOrg = await receiver();
    await harness.register('orgA', all, ['*']);
    await harness.register('orgA', onlyTickets, ['ticket.created']);
    await harness.register('orgB', otherOrg, ['*']);
    const sent = [
      await harness.publish('orgA', 'resource.created', { name: 'r1' }),
      await harness.publish('orgA', 'ticket.created', { ticketId: 'T-1' }),
      await harness.publish('orgA', 'message_status', { status: 'delivered' }),
    ];
    await waitFor(() => all.delivered().size === 3 && onlyTickets.delivered().size === 1);
    for (const r of [...all.requests, ...onlyTickets.requests]) {
      expect(r.signaturesValid).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
    }
    const body = JSON.parse(onlyTickets.requests[0]!.body.toString('utf8'));
    expect(body).toEqual({ id: sent[1]!.id, type: 'ticket.created', createdAt: sent[1]!.createdAt, organizationId: 'orgA', data: { ticketId: 'T-1' } });
    expect(onlyTickets.requests[0]!.headers['webhook-id']).toBe(sent[1]!.id);
    // Another organization's events never reach orgB's receiver.
    await new Promise((r) => setTimeout(r, 200));
    expect(otherOrg.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('retries 5xx until the receiver recovers: every event arrives, each successful once, every attempt recorded', async () => {
    harness = await startHarness();
    const r = await receiver();
    let failing = true;
    r.behave(() => (failing ? { status: 500 } : { status: 200 }));
    const reg = await harness.register('orgA', r);
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push(await harness.publish('orgA', 'resource.updated', { i }));
    await waitFor(() => r.requests.length >= 40, 15_000, '500s');
    failing = false;
    await waitFor(() => r.delivered().size === 20, 20_000, 'all 20 delivered');
    const delivered = r.delivered();
    for (const e of sent) expect(delivered.get(e.id)).toBe(1);
    expect(r.requests.every((q) => q.signaturesValid)).toBe(true);
    const list = await harness.registrations.listDeliveries('orgA', reg.id, { page: 1, limit: 100 });
    expect(list.total).toBe(20);
    for (const d of list.deliveries) expect(d.attempts.length).toBeGreaterThanOrEqual(1);
    // The receiver answers before the dispatcher records the outcome.
    const done = await eventually(async () => {
      const p = await harness!.registrations.listDeliveries('orgA', reg.id, { status: 'succeeded', page: 1, limit: 100 });
      return p.total === 20 ? p : undefined;
    });
    const withFailures = done.deliveries.filter((d) => d.attempts.some((a) => a.status === 500));
    expect(withFailures.length).toBeGreaterThan(0);
    for (const d of withFailures) {
      expect(d.attempts.at(-1)).toMatchObject({ status: 200, error: null });
      expect(d.attempts[0]).toMatchObject({ status: 500, error: 'HTTP 500' });
      expect(typeof d.attempts[0]!.latencyMs).toBe('number');
    }
  });

  it('honours Retry-After on 429', async () => {
    harness = await startHarness();
    const r = await receiver();
    r.behave((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    await harness.register('orgA', r);
    await harness.publish('orgA');
    await waitFor(() => r.delivered().size === 1);
    const posts = r.requests.filter((q) => q.method === 'POST');
    expect(posts).toHaveLength(2);
    const t1 = Number(posts[0]!.headers['webhook-timestamp']);
    const t2 = Number(posts[1]!.headers['webhook-timestamp']);
    // Base delay is 50 ms; only Retry-After explains a second or more.
    expect(t2 - t1).toBeGreaterThanOrEqual(1);
  });

  it('410 disables the registration and fails the delivery; later events are not sent', async () => {
    harness = await startHarness();
    const r = await receiver();
    r.behave(() => ({ status: 410 }));
    const reg = await harness.register('orgA', r);
    await harness.publish('orgA');
    const got = await eventually(async () => {
      const g = await harness!.registrations.get('orgA', reg.id);
      return g.status === 'disabled' ? g : undefined;
    });
    expect(got.disabledReason).toMatch(/410/);
    await harness.publish('orgA');
    await new Promise((res) => setTimeout(res, 300));
    expect(r.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    const failed = await harness.registrations.listDeliveries('orgA', reg.id, { status: 'failed', page: 1, limit: 10 });
    expect(failed.total).toBe(1);
  });

  it('treats 3xx as a failure without following the redirect, and 4xx as final; a failed delivery can be re-sent', async () => {
    harness = await startHarness();
    const target = await receiver();
    const r = await receiver();
    let mode: 'redirect' | 'bad' | 'ok' = 'redirect';
    r.behave(() => (mode === 'redirect' ? { status: 307, headers: { location: target.url } } : mode === 'bad' ? { status: 400 } : { status: 200 }));
    const reg = await harness.register('orgA', r);
    await harness.publish('orgA');
    const failedOne = async () => (await harness!.registrations.listDeliveries('orgA', reg.id, { status: 'failed', page: 1, limit: 10 })).deliveries;
    let failed = await eventually(async () => { const f = await failedOne(); return f.length === 1 ? f : undefined; });
    expect(failed[0]!.attempts).toHaveLength(1);
    expect(failed[0]!.attempts[0]!).toMatchObject({ status: 307 });
    expect(failed[0]!.attempts[0]!.error).toMatch(/redirect/);
    expect(target.requests.filter((q) => q.method === 'POST')).toHaveLength(0);

    mode = 'bad';
    await harness.registrations.resend('orgA', reg.id, failed[0]!.id);
    failed = await eventually(async () => { const f = await failedOne(); return f.length === 1 && f[0]!.attempts.length === 2 ? f : undefined; });
    expect(failed[0]!.attempts[1]!).toMatchObject({ status: 400, error: 'HTTP 400' });

    mode = 'ok';
    const resent = await harness.registrations.resend('orgA', reg.id, failed[0]!.id);
    expect(resent.status).toBe('pending');
    await waitFor(() => r.delivered().size === 1);
    expect(r.delivered().get(failed[0]!.eventId)).toBe(1);
  });

  it('gives up after the retry window and keeps the delivery as failed', async () => {
    harness = await startHarness({ retry: { windowMs: 500, baseMs: 50, maxDelayMs: 100 } });
    const r = await receiver();
    r.behave(() => ({ status: 503 }));
    const reg = await harness.register('orgA', r);
    await harness.publish('orgA');
    const page = await eventually(async () => {
      const p = await harness!.registrations.listDeliveries('orgA', reg.id, { status: 'failed', page: 1, limit: 10 });
      return p.total === 1 ? p : undefined;
    });
    expect(page.deliveries[0]!.attempts.at(-1)!.error).toMatch(/gave up after \d+ attempts/);
    expect(r.requests.filter((q) => q.method === 'POST').length).toBeGreaterThan(2);
  });

  it('survives receivers that hang, answer garbage, half-close or drop the connection, and never delays the others', async () => {
    harness = await startHarness({ timeoutMs: 3000, retry: { baseMs: 5000, maxDelayMs: 5000 } });
    const hang = await receiver();
    hang.behave(() => 'hang');
    const garbage = await receiver();
    garbage.behave(() => 'garbage');
    const half = await receiver();
    half.behave(() => 'half-close');
    const drop = await receiver();
    drop.behave(() => 'destroy');
    const good = await receiver();
    const regs = {
      hang: await harness.register('orgA', hang),
      garbage: await harness.register('orgA', garbage),
      half: await harness.register('orgA', half),
      drop: await harness.register('orgA', drop),
    };
    await harness.register('orgA', good);
    for (let i = 0; i < 20; i++) await harness.publish('orgA', 'resource.updated', { i });
    await waitFor(() => good.delivered().size === 20, 10_000, 'the healthy receiver got everything');
    // The hanging receiver's requests have not timed out yet: the healthy one did not wait for them.
    const hangRecord = await harness.registrations.listDeliveries('orgA', regs.hang.id, { page: 1, limit: 100 });
    expect(hangRecord.deliveries.every((d) => d.attempts.length === 0)).toBe(true);
    expect(hang.requests.length).toBeGreaterThan(0);

    const firstAttempt = async (id: string) => {
      const p = await harness!.registrations.listDeliveries('orgA', id, { page: 1, limit: 100 });
      return p.deliveries.map((d) => d.attempts[0]).filter((a) => a !== undefined);
    };
    const recorded = (id: string, what: string) => eventually(async () => { const a = await firstAttempt(id); return a.length > 0 ? a : undefined; }, 10_000, what);
    let attempts = await recorded(regs.hang.id, 'hang timeout recorded');
    expect(attempts[0]).toMatchObject({ status: null });
    expect(attempts[0]!.error).toMatch(/timed out/);
    for (const [name, pattern] of [['garbage', /invalid HTTP response|parse|reset/i], ['half', /abort|reset|hang up|closed/i], ['drop', /reset|hang up|closed/i]] as const) {
      attempts = await recorded(regs[name].id, `${name} recorded`);
      expect(attempts[0]!.status).toBeNull();
      expect(attempts[0]!.error).toMatch(pattern);
    }
  }, 30_000);

  it('signs with the new secret after a rotation, and with the old one too during the grace period', async () => {
    harness = await startHarness();
    const r = await receiver();
    const reg = await harness.register('orgA', r);
    const rotated = await harness.registrations.rotateSecret('orgA', reg.id);
    expect(rotated.secret).not.toBe(reg.secret);
    // Wait for the lane to see the rotation (registrations are re-read about every second).
    await new Promise((res) => setTimeout(res, 1100));
    r.setSecret(rotated.secret);
    await harness.publish('orgA');
    await waitFor(() => r.delivered().size === 1);
    expect(r.requests[0]!.signaturesValid).toBe(true);
    expect(String(r.requests[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // A receiver still on the old secret accepts the Standard Webhooks signature.
    const { verifyStandardWebhook } = await import('../../docs/examples/verify-webhook.mjs');
    expect(verifyStandardWebhook(reg.secret, r.requests[0]!.headers, r.requests[0]!.body)).toBe(true);
  });
});
