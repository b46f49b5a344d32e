import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthCredentials, ToolCredentials, ToolRecord } from '../../src/domain/tools.js';
import { SecretBox } from '../../src/store/secret-box.js';
import type { ToolRepo } from '../../src/store/tools/port.js';

export interface ToolStoreFixture {
  /** Two handles on one store, as two nodes would have (the same one in embedded mode). */
  repo: ToolRepo;
  otherNode: ToolRepo;
  /** Everything stored, as text: no secret may appear in it. */
  rawDump(): Promise<string>;
  /** The same store opened with another secret box (for key rotation). */
  reopen(box: SecretBox): ToolRepo;
  close(): Promise<void>;
}

let n = 0;
export function toolRecord(org: string, over: Partial<ToolRecord> = {}): ToolRecord {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n++)).toISOString();
  return {
    id: `tool_${randomBytes(9).toString('base64url')}`,
    organizationId: org,
    integration: 'email',
    name: 'Inbox',
    status: 'active',
    statusReason: null,
    provider: 'sandbox',
    account: null,
    returnUrl: null,
    createdByKeyId: 'key_1',
    createdAt: at,
    updatedAt: at,
    lastUsedAt: null,
    ...over,
  };
}

const creds = (token = `ya29.secret-${randomBytes(6).toString('hex')}`): OAuthCredentials => ({ kind: 'oauth', accessToken: token, refreshToken: `1//refresh-${randomBytes(6).toString('hex')}`, expiresAt: Date.now() + 3_600_000, scope: 's' });

const token = (c: ToolCredentials | null) => (c?.kind === 'oauth' ? c.accessToken : undefined);

/** The tool store's guarantees (see `ToolRepo`), for every adapter. */
export function runToolStoreContract(name: string, create: (box: SecretBox) => Promise<ToolStoreFixture>): void {
  describe(`tool store contract: ${name}`, () => {
    let f: ToolStoreFixture | undefined;
    const firstKey = randomBytes(32);
    const open = async () => (f = await create(new SecretBox(firstKey)));
    afterEach(async () => {
      await f?.close();
      f = undefined;
    });

    it('keeps tools per organization: another organization gets null, lists only its own, cannot update or delete', async () => {
      const { repo } = await open();
      const a = toolRecord('org_a');
      const b = toolRecord('org_b');
      await repo.create(a, null);
      await repo.create(b, creds());
      expect(await repo.get('org_a', a.id)).toEqual(a);
      expect(await repo.get('org_b', a.id)).toBeNull();
      expect(await repo.getGlobal(a.id)).toEqual(a);
      expect((await repo.list('org_a')).map((t) => t.id)).toEqual([a.id]);
      expect(await repo.update({ ...a, organizationId: 'org_b', name: 'stolen' })).toBe(false);
      expect(await repo.delete('org_b', a.id)).toBe(false);
      expect((await repo.get('org_a', a.id))?.name).toBe('Inbox');
    });

    it('seals credentials: nothing secret in what is stored; they open bound to their tool; delete removes them for good', async () => {
      const { repo, rawDump } = await open();
      const t = toolRecord('org_a');
      const c = creds('ya29.very-secret-token');
      await repo.create(t, c);
      expect(await repo.getCredentials(t.id)).toEqual(c);
      const dump = await rawDump();
      expect(dump).not.toContain('very-secret-token');
      expect(dump).not.toContain(c.refreshToken!);
      expect(await repo.putCredentials(t.id, { ...c, accessToken: 'ya29.next' })).toBe(true);
      expect(token(await repo.getCredentials(t.id))).toBe('ya29.next');
      await repo.recordPaymentEvent(t.id, { paymentId: 'cs_1', status: 'paid', eventId: 'evt_1', at: t.createdAt });
      expect(await repo.delete('org_a', t.id)).toBe(true);
      expect(await repo.getCredentials(t.id)).toBeNull();
      expect(await repo.paymentEvents(t.id, 'cs_1')).toEqual([]);
      expect(await repo.putCredentials(t.id, c)).toBe(false);
      expect(await repo.getCredentials(t.id)).toBeNull();
      expect(await rawDump()).not.toContain(t.id + '"');
    });

    it('key rotation: values sealed under the previous key open with it, and are sealed again under the new key when read', async () => {
      const fx = await open();
      const t = toolRecord('org_a');
      await fx.repo.create(t, creds('ya29.rotate-me'));
      const nextKey = randomBytes(32);
      const rotated = fx.reopen(new SecretBox(nextKey, [firstKey]));
      expect(token(await rotated.getCredentials(t.id))).toBe('ya29.rotate-me');
      // Sealed again: the new key alone opens it now.
      const onlyNew = fx.reopen(new SecretBox(nextKey));
      expect(token(await onlyNew.getCredentials(t.id))).toBe('ya29.rotate-me');
      // A store with neither key cannot open it.
      await expect(fx.reopen(new SecretBox(randomBytes(32))).getCredentials(t.id)).rejects.toThrow();
    });

    it('OAuth state: single use across nodes, never after expiry', async () => {
      const { repo, otherNode } = await open();
      const s = { state: `st_${randomBytes(8).toString('hex')}`, organizationId: 'org_a', toolId: 'tool_x', codeVerifier: 'v', redirectUri: 'http://x/cb', expiresAt: Date.now() + 60_000 };
      await repo.putState(s);
      const takes = await Promise.all([repo.takeState(s.state, Date.now()), otherNode.takeState(s.state, Date.now()), repo.takeState(s.state, Date.now())]);
      expect(takes.filter((x) => x !== null)).toEqual([s]);
      const old = { ...s, state: `st_${randomBytes(8).toString('hex')}`, expiresAt: Date.now() + 60_000 };
      await repo.putState(old);
      expect(await repo.takeState(old.state, Date.now() + 120_000)).toBeNull();
      expect(await repo.takeState('forged', Date.now())).toBeNull();
    });

    it('refresh lock: one owner at a time across nodes; released by its owner only', async () => {
      const { repo, otherNode } = await open();
      const got = await Promise.all([repo.tryLock('tool_l', 'a', 10_000), otherNode.tryLock('tool_l', 'b', 10_000)]);
      expect(got.filter(Boolean)).toHaveLength(1);
      const winner = got[0] ? 'a' : 'b';
      await repo.unlock('tool_l', winner === 'a' ? 'b' : 'a');
      expect(await otherNode.tryLock('tool_l', 'c', 10_000)).toBe(false);
      await repo.unlock('tool_l', winner);
      expect(await otherNode.tryLock('tool_l', 'c', 10_000)).toBe(true);
    });

    it('touch sets lastUsedAt only, never undoing another change, and only within the organization', async () => {
      const { repo, otherNode } = await open();
      const t = toolRecord('org_a');
      await repo.create(t, null);
      await otherNode.update({ ...t, status: 'reauthorization_required', statusReason: 'revoked' });
      await repo.touch('org_a', t.id, '2026-02-01T00:00:00.000Z');
      await repo.touch('org_b', t.id, '2030-01-01T00:00:00.000Z');
      expect(await repo.get('org_a', t.id)).toEqual({ ...t, status: 'reauthorization_required', statusReason: 'revoked', lastUsedAt: '2026-02-01T00:00:00.000Z' });
    });

    it('payment events are recorded once per provider event id', async () => {
      const { repo } = await open();
      const t = toolRecord('org_a', { integration: 'payment' });
      await repo.create(t, null);
      const e = { paymentId: 'cs_1', status: 'paid' as const, eventId: 'evt_1', at: t.createdAt };
      expect(await repo.recordPaymentEvent(t.id, e)).toBe(true);
      expect(await repo.recordPaymentEvent(t.id, e)).toBe(false);
      expect(await repo.paymentEvents(t.id, 'cs_1')).toEqual([e]);
      expect(await repo.recordPaymentEvent('tool_gone', e)).toBe(false);
    });

    it('return origins: add, list, remove', async () => {
      const { repo } = await open();
      await repo.allowReturnOrigin('https://app.example.com');
      await repo.allowReturnOrigin('https://app.example.com');
      expect(await repo.returnOrigins()).toEqual(['https://app.example.com']);
      expect(await repo.removeReturnOrigin('https://app.example.com')).toBe(true);
      expect(await repo.removeReturnOrigin('https://app.example.com')).toBe(false);
      expect(await repo.returnOrigins()).toEqual([]);
    });
  });
}
