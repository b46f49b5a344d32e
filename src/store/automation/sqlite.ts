import type { SqliteDb } from '../sqlite/db.js';
import { EMPTY_RULE_SET, type AutomationRuleRepo, type AutomationRuleSet } from './port.js';

const COLL = 'automationRules';
/** Each organization's version beside its set: a read checks the small version, not the whole set's text. */
const VERSIONS = 'automationRuleVersions';

/** Rule sets in the node's `records`, one per organization; the parsed set is kept while its stored version is the same. */
export function createSqliteAutomationRuleRepo(db: SqliteDb): AutomationRuleRepo {
  const parsed = new Map<string, AutomationRuleSet>();
  const read = (org: string): AutomationRuleSet => {
    const version = db.get<number>(VERSIONS, org);
    const hit = parsed.get(org);
    if (version !== undefined && hit !== undefined && hit.version === version) return hit;
    const text = db.getRaw(COLL, org);
    if (text === undefined) return EMPTY_RULE_SET;
    const set = JSON.parse(text) as AutomationRuleSet;
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(org, set);
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
        db.apply([
          { coll: COLL, key: org, value: next },
          { coll: VERSIONS, key: org, value: next.version },
        ]);
        return true;
      });
    },
  };
}
