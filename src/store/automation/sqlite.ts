import type { SqliteDb } from '../sqlite/db.js';
import { EMPTY_RULE_SET, type AutomationRuleRepo, type AutomationRuleSet } from './port.js';

const COLL = 'automationRules';

/** Rule sets in the node's `records`, one per organization; the parsed set is kept while its stored text is the same. */
export function createSqliteAutomationRuleRepo(db: SqliteDb): AutomationRuleRepo {
  const parsed = new Map<string, { text: string; set: AutomationRuleSet }>();
  const read = (org: string): AutomationRuleSet => {
    const text = db.getRaw(COLL, org);
    if (text === undefined) return EMPTY_RULE_SET;
    const hit = parsed.get(org);
    if (hit !== undefined && hit.text === text) return hit.set;
    const set = JSON.parse(text) as AutomationRuleSet;
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(org, { text, set });
    return set;
  };
  return {
    async get(org) {
      return read(org);
    },
    async replace(org, next, expected) {
      // Read and write in one synchronous step of the node's only writer: nothing interleaves.
      return db.run(() => {
        if (read(org).version !== expected) return false;
        db.apply([{ coll: COLL, key: org, value: next }]);
        return true;
      });
    },
  };
}
