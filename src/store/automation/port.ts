import type { AutomationRule } from '../../domain/automation.js';

/** An organization's rules, in evaluation order, with the version every change bumps. */
export interface AutomationRuleSet {
  version: number;
  rules: AutomationRule[];
}

/**
 * The automation rules of every organization, one ordered set each. Read on
 * every customer message (by the conversation actor), written by admins:
 * `get` is cheap (the embedded adapter parses a set once per change; the
 * PostgreSQL one keeps a read for a second, so a change made on another
 * node applies within it). A change replaces the whole set, only when the
 * stored version is still the one it was made from, so two admins' edits
 * never lose one another.
 */
export interface AutomationRuleRepo {
  /** Version 0 and no rules when the organization never had any. */
  get(organizationId: string): Promise<AutomationRuleSet>;
  /** Stores `next` (whose version is `expected + 1`) when the stored version is `expected`; false otherwise, nothing written. */
  replace(organizationId: string, next: AutomationRuleSet, expected: number): Promise<boolean>;
}

export const EMPTY_RULE_SET: AutomationRuleSet = Object.freeze({ version: 0, rules: [] }) as AutomationRuleSet;
