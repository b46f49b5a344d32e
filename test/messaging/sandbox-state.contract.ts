import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_TEMPLATES, type SandboxAccount, type SandboxState } from '../../src/network/sandbox/index.js';

export function runSandboxStateContract(name: string, create: () => Promise<{ state: SandboxState; close(): Promise<void> }>) {
  describe(`sandbox state contract: ${name}`, () => {
    let s: { state: SandboxState; close(): Promise<void> };
    beforeEach(async () => {
      s = await create();
    });
    afterEach(() => s.close());
    const account = (pnid: string, waba = 'w1'): SandboxAccount => ({
      phoneNumberId: pnid,
      businessAccountId: waba,
      displayPhoneNumber: '15550001',
      verifiedName: 'X',
      accessToken: `t-${pnid}`,
      appSecret: 's',
      verifyToken: 'v',
      callbackUrl: '/hook',
      createdAt: '2030-01-01T00:00:00.000Z',
    });

    it('keeps accounts, by phone number and by business', async () => {
      await s.state.putAccount(account('p1'));
      await s.state.putAccount(account('p2'));
      await s.state.putAccount(account('p3', 'w2'));
      expect(await s.state.getAccount('p1')).toEqual(account('p1'));
      expect(await s.state.getAccount('nope')).toBeNull();
      expect((await s.state.accountsOfBusiness('w1')).map((a) => a.phoneNumberId).sort()).toEqual(['p1', 'p2']);
      expect(await s.state.listAccounts()).toHaveLength(3);
    });

    it('keeps templates per business, deletes by name or name and language', async () => {
      for (const t of SANDBOX_TEMPLATES) await s.state.putTemplate('w1', { ...t, id: t.name + t.language });
      expect((await s.state.listTemplates('w1')).length).toBe(SANDBOX_TEMPLATES.length);
      expect(await s.state.listTemplates('w2')).toEqual([]);
      const first = SANDBOX_TEMPLATES[0]!;
      expect(await s.state.getTemplate('w1', first.name, first.language)).toEqual({ ...first, id: first.name + first.language });
      expect(await s.state.getTemplate('w2', first.name, first.language)).toBeNull();
      expect(await s.state.getTemplate('w1', first.name, 'xx_XX')).toBeNull();
      expect(await s.state.deleteTemplates('w1', 'hello_world', 'es')).toBe(1);
      expect(await s.state.deleteTemplates('w1', 'order_update')).toBe(1);
      expect(await s.state.deleteTemplates('w1', 'order_update')).toBe(0);
      expect((await s.state.listTemplates('w1')).map((t) => t.name)).not.toContain('order_update');
    });

    it('keeps the latest inbound time and the conversation in order', async () => {
      await s.state.noteInbound('p1', '4911', 2000);
      await s.state.noteInbound('p1', '4911', 1000);
      expect(await s.state.lastInbound('p1', '4911')).toBe(2000);
      expect(await s.state.lastInbound('p1', '4912')).toBeNull();
      for (let i = 0; i < 3; i++) await s.state.putMessage({ id: `m${i}`, phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: i, status: 'accepted' });
      await s.state.putMessage({ id: 'm1', phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: 1, status: 'delivered' });
      expect(await s.state.updateMessage({ id: 'm1', phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: 1, status: 'read' })).toBe(true);
      expect(await s.state.updateMessage({ id: 'm9', phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: 9, status: 'read' })).toBe(false);
      expect(await s.state.getMessage('m9')).toBeNull();
      expect((await s.state.conversation('p1', '4911', 10)).map((m) => `${m.id}:${m.status}`)).toEqual(['m0:accepted', 'm1:read', 'm2:accepted']);
      expect((await s.state.conversation('p1', '4911', 2)).map((m) => m.id)).toEqual(['m1', 'm2']);
      expect(await s.state.getMessage('m1')).toMatchObject({ status: 'read' });
    });
  });
}

