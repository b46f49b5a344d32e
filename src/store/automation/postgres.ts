import { FreshCache } from '../fresh-cache.js';
import type { PgDb } from '../postgres/db.js';
import { EMPTY_RULE_SET, type AutomationRuleRepo, type AutomationRuleSet } from './port.js';

const COLL = 'automationRules';
/** How long a read serves the hot path (every customer message reads its organization's rules). */
const FRESH_MS = 1_000;

/** Rule sets in `records`, one row per organization; a change is one conditional statement on the stored version. */
export function createPostgresAutomationRuleRepo(db: PgDb): AutomationRuleRepo {
  const fresh = new FreshCache<AutomationRuleSet>(FRESH_MS);
  return {
    get(org) {
      return fresh.get(org, async () => (await db.get<AutomationRuleSet>(COLL, org)) ?? EMPTY_RULE_SET, () => true);
    },
    async replace(org, next, expected) {
      fresh.forget((k) => k === org);
      const r =
        expected === 0
          ? await db.query('INSERT INTO records (coll, key, value) VALUES ($1, $2, $3) ON CONFLICT (coll, key) DO NOTHING', [COLL, org, JSON.stringify(next)])
          : await db.query("UPDATE records SET value = $3 WHERE coll = $1 AND key = $2 AND (value->>'version')::bigint = $4", [COLL, org, JSON.stringify(next), expected]);
      fresh.forget((k) => k === org);
      return r.rowCount === 1;
    },
  };
}
