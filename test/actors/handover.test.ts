import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';

/**
 * The handover API (spec: Conversation handover), run against one embedded
 * node and against three clustered nodes sharing redis-server and
 * nats-server, where calls go to different nodes in turn.
 */
function handoverSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`handover API (${name})`, () => {
    let nodes: TestService[];
    let a: TestOrg;
    let b: TestOrg;
    let turn = 0;
    /** Each call goes to the next node. */
    const call: TestService['call'] = (...args) => nodes[turn++ % nodes.length]!.call(...args);
    const seen: DomainEvent[] = [];

    beforeAll(async () => {
      nodes = await start();
      a = await nodes[0]!.createOrg('A');
      b = await nodes[0]!.createOrg('B');
      await nodes[0]!.running.services.events.consume(`handover-test-${Date.now()}`, async (e) => {
        if (e.type.startsWith('handover.')) seen.push(e);
      });
    }, 60_000);
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    const request = (key: string, audienceExternalId: string, headers?: Record<string, string>) => call('POST', '/v1/handover', { key, body: { audienceExternalId }, headers });
    const open = (key: string, audienceExternalId: string) => call('PATCH', '/v1/handover/open', { key, body: { audienceExternalId } });
    const eventsOf = (org: string, aeid: string) => seen.filter((e) => e.organizationId === org && (e.data as { audienceExternalId: string }).audienceExternalId === aeid);
    async function eventually(cond: () => boolean) {
      const t0 = Date.now();
      while (!cond()) {
        if (Date.now() - t0 > 10_000) throw new Error('event not seen');
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    it('queues the conversation once, hands it back once, and emits an event for each change', async () => {
      const c = await a.contact('15550000001:1065401');
      expect(await request(a.adminKey, c.audienceExternalId)).toMatchObject({ status: 200, body: { success: true } });
      expect(await request(a.adminKey, c.audienceExternalId)).toMatchObject({ status: 200, body: { success: false } });
      expect(await open(a.adminKey, c.audienceExternalId)).toMatchObject({ status: 200, body: { success: true } });
      // Already with the bot: nothing to hand back (decision: success false, like the request side).
      expect(await open(a.adminKey, c.audienceExternalId)).toMatchObject({ status: 200, body: { success: false } });
      expect(await request(a.adminKey, c.audienceExternalId)).toMatchObject({ status: 200, body: { success: true } });
      await eventually(() => eventsOf(a.id, c.audienceExternalId).length === 3);
      const evs = eventsOf(a.id, c.audienceExternalId);
      expect(evs.map((e) => e.type)).toEqual(['handover.requested', 'handover.opened', 'handover.requested']);
      expect(evs[0]!.data).toMatchObject({ audienceExternalId: c.audienceExternalId, contactId: c.id });
      expect((evs[0]!.data as { sessionId: string }).sessionId).toBe((evs[1]!.data as { sessionId: string }).sessionId);
    });

    it('answers 50 simultaneous requests for one contact with exactly one success', async () => {
      const c = await a.contact('15550000002:1065401');
      const replies = await Promise.all(Array.from({ length: 50 }, () => request(a.adminKey, c.audienceExternalId)));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect(replies.filter((r) => r.body.success === true)).toHaveLength(1);
      await eventually(() => eventsOf(a.id, c.audienceExternalId).length >= 1);
      await new Promise((r) => setTimeout(r, 200));
      expect(eventsOf(a.id, c.audienceExternalId)).toHaveLength(1);
    });

    it('gives a retry with the same Idempotency-Key the first answer', async () => {
      const c = await a.contact('15550000003:1065401');
      const h = { 'idempotency-key': 'retry-1' };
      expect((await request(a.adminKey, c.audienceExternalId, h)).body).toEqual({ success: true });
      expect((await request(a.adminKey, c.audienceExternalId, h)).body).toEqual({ success: true });
      expect((await request(a.adminKey, c.audienceExternalId)).body).toEqual({ success: false });
      expect((await request(a.adminKey, c.audienceExternalId, { 'idempotency-key': 'x'.repeat(201) })).status).toBe(400);
    });

    it('answers 404 for an unknown contact and 400 for a bad body, in the error shape', async () => {
      const r = await request(a.adminKey, '19990000000:9');
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ success: false, error: { code: 'not_found' } });
      const bad = await call('POST', '/v1/handover', { key: a.adminKey, body: { audienceExternalId: 42 } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ success: false, error: { code: 'validation_failed' } });
      expect((await call('PATCH', '/v1/handover/open', { key: a.adminKey, body: {} })).status).toBe(400);
      expect((await call('POST', '/v1/handover', { key: a.adminKey, rawBody: '{"audienceExternalId":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    });

    it('needs the right scope for each operation', async () => {
      const c = await a.contact('15550000004:1065401');
      const requestOnly = await a.keyWith(['conversation:handover:request']);
      const openOnly = await a.keyWith(['conversation:handover:open']);
      expect((await request(openOnly, c.audienceExternalId)).body).toMatchObject({ error: { code: 'insufficient_scope' } });
      expect((await request(requestOnly, c.audienceExternalId)).body).toEqual({ success: true });
      expect((await open(requestOnly, c.audienceExternalId)).status).toBe(403);
      expect((await open(openOnly, c.audienceExternalId)).body).toEqual({ success: true });
      expect((await call('POST', '/v1/handover', { body: { audienceExternalId: c.audienceExternalId } })).status).toBe(401);
    });

    it('never lets one organization see or change another\'s conversations', async () => {
      const aeid = '15550000005:1065401';
      const cb = await b.contact(aeid);
      // A has no such contact: 404, and B's conversation is untouched.
      expect((await request(a.adminKey, aeid)).status).toBe(404);
      expect((await open(a.adminKey, aeid)).status).toBe(404);
      expect((await request(b.adminKey, aeid)).body).toEqual({ success: true });
      // The same audienceExternalId in A is a different contact with its own conversation.
      await a.contact(aeid);
      expect((await request(a.adminKey, aeid)).body).toEqual({ success: true });
      expect((await open(a.adminKey, aeid)).body).toEqual({ success: true });
      expect((await request(b.adminKey, aeid)).body).toEqual({ success: false });
      await eventually(() => eventsOf(b.id, aeid).length === 1 && eventsOf(a.id, aeid).length === 2);
      expect(eventsOf(b.id, aeid)[0]!.data).toMatchObject({ contactId: cb.id });
    });
  });
}

handoverSuite('embedded', async () => [await startTestService()]);

const servers = useClusterServers();

handoverSuite('clustered, three nodes', async () => {
  const env = (id: string) => ({
    ...servers.env('ho'),
    NODE_ID: id,
    ACTOR_PARTITIONS: '16',
    ACTOR_LEASE_MS: '2000',
    SECRETS_KEY: '0'.repeat(64),
  });
  return Promise.all(['h1', 'h2', 'h3'].map((id) => startTestService({ env: env(id) })));
});
