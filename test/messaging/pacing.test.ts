import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemorySendPacer } from '../../src/store/send-pacing/memory.js';
import type { SendPacer } from '../../src/store/send-pacing/port.js';
import { createRedisSendPacer } from '../../src/store/send-pacing/redis.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers, useRedisClients } from '../harness/use-servers.js';
import { messagingOrg, op, orderUpdate, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

/**
 * A phone number's throughput tier: sends above it wait their turn (in
 * order per contact) up to a bounded backlog, then 429 with Retry-After;
 * nothing refused ever reaches the network, nothing accepted is lost or
 * sent twice.
 */

/** One contract for both adapters: turns in call order, a bounded backlog, one budget for every node. */
function pacerContract(name: string, make: () => Promise<{ a: SendPacer; b: SendPacer }>) {
  describe(`send pacer (${name})`, () => {
    it('spaces turns by the tier in call order, refuses past the backlog bound without using the budget, and shares one budget between nodes', async () => {
      const { a, b } = await make();
      const ch = `ch_${randomUUID()}`;
      // 1 per second, at most 3 s of waiting: turns at about 0, 1, 2, 3 s, then refused.
      const grants = [];
      /** When each granted turn is due, on this process's clock: when it was asked plus its wait. */
      const due: number[] = [];
      for (let i = 0; i < 6; i++) {
        const asked = performance.now();
        const g = await (i % 2 === 0 ? a : b).reserve(ch, 1, 3_000);
        grants.push(g);
        if (g.ok) due.push(asked + g.waitMs);
      }
      expect(grants.slice(0, 4).every((g) => g.ok)).toBe(true);
      // A second apart, however slowly the calls came (a slow machine shortens the waits, not the
      // spacing); the margin is for how late each call reached the pacer. Unpaced, they would be 0 apart.
      for (let i = 1; i < 4; i++) expect(due[i]! - due[i - 1]!).toBeGreaterThan(500);
      for (const g of grants.slice(4)) {
        expect(g.ok).toBe(false);
        if (!g.ok) expect(g.retryAfterMs).toBeGreaterThan(0);
      }
      // Another channel has a budget of its own.
      expect(await a.reserve(`ch_${randomUUID()}`, 1, 0)).toEqual({ ok: true, waitMs: 0 });
    });
  });
}

pacerContract('embedded', async () => {
  const p = createMemorySendPacer();
  // One node embedded: both "nodes" are this one.
  return { a: p, b: p };
});

const redis = useRedisClients();

pacerContract('redis', async () => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const [c1, c2] = [await redis.client(), await redis.client()];
  return { a: createRedisSendPacer(c1, prefix), b: createRedisSendPacer(c2, prefix) };
});

// 0.75 s of backlog at 8 sends per second: at most 6 sends wait; a burst of 36 overflows it.
const PACING_ENV = { TEMPLATE_RATE_LIMIT_PER_MINUTE: '100000', SEND_PACING_MAX_WAIT_MS: '750' };

pacedNumberSuite('embedded', () => Promise.all([startMessagingService({ env: PACING_ENV })]));

const servers = useClusterServers();
pacedNumberSuite('clustered, two nodes sharing the number', () => {
  const env = (id: string) => ({
    ...PACING_ENV,
    ...servers.env('pace'),
    NODE_ID: id,
    ACTOR_PARTITIONS: '8',
    ACTOR_LEASE_MS: '2000',
    SECRETS_KEY: '1'.repeat(64),
    SANDBOX_NETWORK: 'true',
  });
  return Promise.all(['p1', 'p2'].map((id) => startMessagingService({ env: env(id) })));
});

/** Sends go to the nodes in turn, so in the clustered run both spend the number's one budget. */
function pacedNumberSuite(label: string, start: () => Promise<TestService[]>) {
  describe(`a paced number (${label})`, () => {
    let nodes: TestService[];
    let svc: TestService;
    let a: MessagingOrg;
    let b: MessagingOrg;

    beforeAll(async () => {
      nodes = await start();
      svc = nodes[0]!;
      a = await messagingOrg(svc, 'A', 1000);
      b = await messagingOrg(svc, 'B', 1000);
    }, 60_000);
    afterAll(async () => {
      for (const n of nodes ?? []) await n.close();
    });

    it('takes its tier as a channel setting: validated, shown, and only on the organization\'s own WhatsApp channels', async () => {
      const path = (org: string, ch: string) => `/admin/v1/organizations/${org}/channels/${ch}`;
      for (const bad of [0, 1.5, '4', 10_001]) {
        const r = await op(svc, 'PATCH', path(a.id, a.channelId), { messagesPerSecond: bad });
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body).toMatchObject({ success: false, error: { code: 'validation_failed' } });
      }
      expect((await op(svc, 'PATCH', path(a.id, a.webChannelId), { messagesPerSecond: 5 })).status).toBe(400);
      // Another organization's channel is not found, and keeps its tier.
      expect((await op(svc, 'PATCH', path(b.id, a.channelId), { messagesPerSecond: 5 })).status).toBe(404);
      expect((await op(svc, 'GET', path(a.id, a.channelId))).body.messagesPerSecond).toBe(80);
      const r = await op(svc, 'PATCH', path(a.id, a.channelId), { messagesPerSecond: 8 });
      expect(r.status).toBe(200);
      expect(r.body.messagesPerSecond).toBe(8);
      expect((await svc.call('GET', '/v1/channels', { key: b.adminKey })).body.channels.find((c: { kind: string }) => c.kind === 'whatsapp_cloud').messagesPerSecond).toBe(80);
      const created = await op(svc, 'POST', `/admin/v1/organizations/${b.id}/channels`, { kind: 'whatsapp_cloud', name: 'Fast', network: 'sandbox', messagesPerSecond: 1000 });
      expect(created.status).toBe(201);
      expect(created.body.messagesPerSecond).toBe(1000);
    });

    it('keeps per-contact order and loses nothing when the backlog bound is hit: 429 with Retry-After, nothing sent twice', async () => {
      // The wait is in each contact's actor (a contact's later sends queue in its mailbox), so the backlog fills with many contacts at once.
      const contacts = Array.from({ length: 12 }, (_, i) => String(4915200000010 + i));
      const perContact = 3;
      interface Try {
        contact: string;
        tag: string;
        key: string;
        status?: number;
        messageId?: string;
      }
      const sends: Try[] = [];
      for (let i = 0; i < perContact; i++) for (const c of contacts) sends.push({ contact: c, tag: `P-${c.slice(-2)}-${i}`, key: randomUUID() });
      let turn = 0;
      const send = (t: Try) =>
        nodes[turn++ % nodes.length]!.call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, t.contact, ['Ann', t.tag, 'Monday']), headers: { 'idempotency-key': t.key } });

      // All at once: more than the backlog can hold.
      const first = await Promise.all(sends.map(send));
      first.forEach((r, i) => {
        sends[i]!.status = r.status;
        if (r.status === 201) sends[i]!.messageId = r.body.messageId;
        else {
          expect(r.status, JSON.stringify(r.body)).toBe(429);
          expect(r.body).toMatchObject({ success: false, error: { code: 'throughput_backlog_full', details: { messagesPerSecond: 8 } } });
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        }
      });
      const refused = sends.filter((t) => t.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(sends.filter((t) => t.status === 201).length).toBeGreaterThan(0);
      // A refused send was not charged: the balance counts the accepted ones only.
      const balance = async () => (await op(svc, 'GET', `/admin/v1/organizations/${a.id}/credits`)).body.balance as number;
      const price = (await op(svc, 'GET', `/admin/v1/organizations/${a.id}/credits`)).body.prices.UTILITY as number;
      expect(await balance()).toBe(1000 - price * sends.filter((t) => t.status === 201).length);

      // The caller retries the refused ones with their keys, one contact after another, until each is taken.
      for (const t of refused) {
        for (let attempt = 0; t.status !== 201; attempt++) {
          if (attempt > 40) throw new Error(`send ${t.tag} still refused`);
          const r = await send(t);
          t.status = r.status;
          if (r.status === 201) t.messageId = r.body.messageId;
          else {
            expect(r.status).toBe(429);
            await new Promise((res) => setTimeout(res, 250));
          }
        }
      }
      // A repeat of an accepted send is answered from its key: the same message, not a second send.
      const again = await send(sends[0]!);
      expect(again.status).toBe(201);
      expect(again.body.messageId).toBe(sends[0]!.messageId);
      expect(await balance()).toBe(1000 - price * sends.length);

      const sandbox = svc.running.services.messaging.sandbox!;
      for (const c of contacts) {
        const mine = sends.filter((t) => t.contact === c);
        // The network got every accepted send of the contact exactly once, and nothing else.
        const atNetwork = (await sandbox.customerPhone(a.phoneNumberId, c, 100)).filter((m) => m.direction === 'to_customer');
        const tags = atNetwork.map((m) => JSON.stringify(m.sent).match(/P-\d+-\d+/)?.[0]);
        expect([...tags].sort()).toEqual(mine.map((t) => t.tag).sort());
        expect(atNetwork.map((m) => m.id).sort()).toEqual(mine.map((t) => t.messageId).sort());
        // The conversation recorded them in the order the network got them.
        const m0 = await svc.running.services.messaging.stores.messages.getByNetworkId(a.id, mine[0]!.messageId!);
        const history = (await svc.call('GET', `/v1/sessions/${m0!.sessionId}/messages`, { key: a.adminKey })).body;
        const recorded = (history as { direction: string; messageId: string }[]).filter((m) => m.direction === 'outbound').map((m) => m.messageId);
        expect(recorded).toEqual(atNetwork.map((m) => m.id));
        // Sends the caller made one after another (the retries) reached the network in that order.
        const retried = refused.filter((t) => t.contact === c).map((t) => t.messageId);
        expect(atNetwork.map((m) => m.id).filter((id) => retried.includes(id))).toEqual(retried);
      }
    }, 60_000);
  });
}
