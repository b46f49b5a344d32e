import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../harness/service.js';

describe('GET /v1/search finds contacts by custom attribute values', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  it("finds a contact by an attribute's value as set over the API, not after it changed, never another organization's", async () => {
    const a = await svc.createOrg('A');
    const b = await svc.createOrg('B');
    const mine = await a.contact('4915100000101:9');
    const theirs = await b.contact('4915100000102:9');
    expect((await svc.call('PATCH', `/v1/contacts/${mine.id}`, { key: a.adminKey, body: { attributes: { plan: 'Platinum', city: 'Zürich' } } })).status).toBe(200);
    expect((await svc.call('PATCH', `/v1/contacts/${theirs.id}`, { key: b.adminKey, body: { attributes: { plan: 'Platinum' } } })).status).toBe(200);
    const found = async (key: string, q: string) => ((await svc.call('GET', `/v1/search?q=${encodeURIComponent(q)}`, { key })).body.contacts as { id: string }[]).map((c) => c.id);
    expect(await found(a.adminKey, 'platinum')).toEqual([mine.id]);
    expect(await found(a.adminKey, 'zurich')).toEqual([mine.id]);
    expect(await found(b.adminKey, 'platinum')).toEqual([theirs.id]);
    expect((await svc.call('PATCH', `/v1/contacts/${mine.id}`, { key: a.adminKey, body: { attributes: { plan: null } } })).status).toBe(200);
    expect(await found(a.adminKey, 'platinum')).toEqual([]);
    expect(await found(a.adminKey, 'zurich')).toEqual([mine.id]);
  });
});
