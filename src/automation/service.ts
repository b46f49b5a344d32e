import { randomBytes } from 'node:crypto';
import { requireScope } from '../app/principal.js';
import type { Clock } from '../clock.js';
import type { AutomationRule, RuleAction, RuleCondition } from '../domain/automation.js';
import type { Principal } from '../domain/types.js';
import { AppError, notFound } from '../errors.js';
import type { AutomationRuleRepo } from '../store/automation/port.js';
import { MAX_RULES, type CreateRuleBody, type RuleView, type UpdateRuleBody } from './schemas.js';

export interface AutomationServiceDeps {
  rules: AutomationRuleRepo;
  /** True when the user exists in the organization and is active (an `assign` action must name one). */
  isActiveUser(organizationId: string, userId: string): Promise<boolean>;
  /** True when the team exists in the organization (an `assign` action with `teamId` must name one). */
  isTeam?(organizationId: string, teamId: string): Promise<boolean>;
  clock: Clock;
}

const view = (r: AutomationRule, position: number): RuleView => ({
  id: r.id,
  name: r.name,
  enabled: r.enabled,
  position,
  conditions: r.conditions,
  actions: r.actions,
  stop: r.stop,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/**
 * An organization's automation rules, in order (scope `settings:manage`).
 * Each change replaces the organization's ordered set in one conditional
 * write, retried on a concurrent change, so positions stay a permutation
 * and no admin's edit is lost.
 */
export class AutomationService {
  constructor(private readonly d: AutomationServiceDeps) {}

  async list(principal: Principal): Promise<RuleView[]> {
    requireScope(principal, 'settings:manage');
    return (await this.d.rules.get(principal.organizationId)).rules.map(view);
  }

  async create(principal: Principal, body: CreateRuleBody): Promise<RuleView> {
    requireScope(principal, 'settings:manage');
    await this.checkActions(principal.organizationId, body.actions);
    const at = new Date(this.d.clock.now()).toISOString();
    const rule: AutomationRule = {
      id: 'rule_' + randomBytes(9).toString('base64url').replace(/[-_]/g, 'x'),
      organizationId: principal.organizationId,
      name: body.name,
      enabled: body.enabled,
      conditions: body.conditions as RuleCondition[],
      actions: body.actions as RuleAction[],
      stop: body.stop,
      createdAt: at,
      updatedAt: at,
    };
    return this.change(principal.organizationId, (rules) => {
      if (rules.length >= MAX_RULES) throw new AppError(409, 'too_many_rules', `an organization has at most ${MAX_RULES} automation rules`);
      const next = [...rules];
      next.splice(Math.min(body.position ?? rules.length, rules.length), 0, rule);
      return { rules: next, result: rule.id };
    });
  }

  async update(principal: Principal, id: string, body: UpdateRuleBody): Promise<RuleView> {
    requireScope(principal, 'settings:manage');
    if (body.actions !== undefined) await this.checkActions(principal.organizationId, body.actions);
    const at = new Date(this.d.clock.now()).toISOString();
    return this.change(principal.organizationId, (rules) => {
      const i = rules.findIndex((r) => r.id === id);
      if (i < 0) throw notFound('automation rule');
      const cur = rules[i]!;
      const updated: AutomationRule = {
        ...cur,
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
        ...(body.conditions === undefined ? {} : { conditions: body.conditions as RuleCondition[] }),
        ...(body.actions === undefined ? {} : { actions: body.actions as RuleAction[] }),
        ...(body.stop === undefined ? {} : { stop: body.stop }),
        updatedAt: at,
      };
      const next = rules.filter((r) => r.id !== id);
      next.splice(Math.min(body.position ?? i, next.length), 0, updated);
      return { rules: next, result: id };
    });
  }

  async delete(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'settings:manage');
    await this.change(principal.organizationId, (rules) => {
      if (!rules.some((r) => r.id === id)) throw notFound('automation rule');
      return { rules: rules.filter((r) => r.id !== id), result: null };
    });
  }

  /**
   * The first embedded start's demo organization: one rule, so the sandbox
   * templates' "Talk to an agent" quick reply reaches the queue (and says so
   * to the customer) without a bot. Only when the organization has no rules.
   */
  async seedDemo(organizationId: string): Promise<void> {
    const at = new Date(this.d.clock.now()).toISOString();
    const rule: AutomationRule = {
      id: 'rule_demo_talk_to_an_agent',
      organizationId,
      name: 'Talk to an agent',
      enabled: true,
      conditions: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }],
      actions: [{ type: 'request_handover' }, { type: 'auto_reply', text: 'Thanks! An agent will be with you shortly.' }],
      stop: true,
      createdAt: at,
      updatedAt: at,
    };
    await this.d.rules.replace(organizationId, { version: 1, rules: [rule] }, 0);
  }

  /** Applies `edit` to the current set and stores it if nobody changed it meanwhile (else again, on the new set). */
  private async change(org: string, edit: (rules: AutomationRule[]) => { rules: AutomationRule[]; result: string | null }): Promise<RuleView> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await this.d.rules.get(org);
      const { rules, result } = edit(cur.rules);
      if (await this.d.rules.replace(org, { version: cur.version + 1, rules }, cur.version)) {
        const i = result === null ? -1 : rules.findIndex((r) => r.id === result);
        return (i < 0 ? undefined : view(rules[i]!, i)) as RuleView;
      }
    }
    throw new AppError(409, 'concurrent_change', 'the rules kept changing while this change was made; retry', undefined, { retryAfterSeconds: 1 });
  }

  private async checkActions(org: string, actions: readonly { type: string; agentId?: string; teamId?: string }[]): Promise<void> {
    for (const [i, a] of actions.entries()) {
      if (a.type === 'assign' && a.teamId !== undefined) {
        if (this.d.isTeam !== undefined && !(await this.d.isTeam(org, a.teamId))) {
          throw new AppError(400, 'validation_failed', `actions[${i}].teamId is not a team of the organization`, [{ field: `body.actions[${i}].teamId`, message: 'no such team in the organization', code: 'custom' }]);
        }
        continue;
      }
      if (a.type === 'assign' && !(await this.d.isActiveUser(org, a.agentId!))) {
        throw new AppError(400, 'validation_failed', `actions[${i}].agentId is not an active user of the organization`, [{ field: `body.actions[${i}].agentId`, message: 'no such active user in the organization', code: 'custom' }]);
      }
    }
  }
}
