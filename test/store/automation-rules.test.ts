import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresAutomationRuleRepo, createSqliteAutomationRuleRepo, openNodeDbIn, type AutomationRuleRepo } from '../../src/store/index.js';
import type { AutomationRule } from '../../src/domain/automation.js';
import { usePostgres } from '../harness/use-postgres.js';

const rule = (org: string, id: string): AutomationRule => ({
  id,
  organizationId: org,
  name: id,
  enabled: true,
  conditions: [{ field: 'text', operator: 'contains', value: 'refund' }],
  actions: [{ type: 'request_handover' }],
  stop: false,
  createdAt: '2026-11-26T10:00:00.000Z',
  updatedAt: '2026-11-26T10:00:00.000Z',
});

/** One suite for every adapter of the automation rule sets. */
function runContract(name: string, open: () => Promise<{ repo: AutomationRuleRepo; close(): Promise<void> }>) {
  describe(`automation rules contract: ${name}`, () => {
    let repo: AutomationRuleRepo;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ repo, close } = await open());
    });
    afterAll(async () => close());

    it('starts empty, replaces only from the stored version, keeps the order given', async () => {
      const org = randomUUID();
      expect(await repo.get(org)).toEqual({ version: 0, rules: [] });
      expect(await repo.replace(org, { version: 1, rules: [rule(org, 'b'), rule(org, 'a')] }, 0)).toBe(true);
      expect(await repo.replace(org, { version: 1, rules: [] }, 0)).toBe(false);
      expect(await repo.replace(org, { version: 3, rules: [] }, 2)).toBe(false);
      expect((await repo.get(org)).rules.map((r) => r.id)).toEqual(['b', 'a']);
      expect(await repo.replace(org, { version: 2, rules: [rule(org, 'a')] }, 1)).toBe(true);
      expect(await repo.get(org)).toEqual({ version: 2, rules: [rule(org, 'a')] });
    });

    it('lets exactly one of racing changes from the same version win, and keeps organizations apart', async () => {
      const [o1, o2] = [randomUUID(), randomUUID()];
      await repo.replace(o2, { version: 1, rules: [rule(o2, 'theirs')] }, 0);
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.replace(o1, { version: 1, rules: [rule(o1, `r${i}`)] }, 0)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const won = results.indexOf(true);
      expect((await repo.get(o1)).rules.map((r) => r.id)).toEqual([`r${won}`]);
      expect((await repo.get(o2)).rules.map((r) => r.id)).toEqual(['theirs']);
    });
  });
}

runContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  return { repo: createSqliteAutomationRuleRepo(db), close: () => db.close() };
});

const postgres = usePostgres();
runContract('postgres', async () => {
  const db = await postgres.open();
  return { repo: createPostgresAutomationRuleRepo(db), close: () => db.close() };
});
