import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { createRuleBody, ruleView, updateRuleBody, type AutomationService } from '../../automation/index.js';
import { defineRoute, type RouteDef } from '../route.js';

const idParams = z.object({ id: z.string().min(1).max(64) });
const ruleResult = z.object({ success: z.literal(true), rule: ruleView });

/** The organization's automation rules, in evaluation order (admins: `settings:manage`). */
export function automationRoutes(automation: AutomationService): RouteDef[] {
  const base = { tag: 'Automation', auth: 'apiKey' as const, scope: 'settings:manage' as const };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/automation-rules',
      operationId: 'listAutomationRules',
      summary: 'The automation rules, in the order they are evaluated on each customer message',
      responses: { 200: { description: 'rules by position', schema: z.object({ success: z.literal(true), rules: z.array(ruleView) }) } },
      handler: async ({ principal }) => ({ body: { success: true, rules: await automation.list(principal) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/automation-rules',
      operationId: 'createAutomationRule',
      summary: 'Add a rule: conditions on a customer message (all must hold) and the actions it takes; at `position`, or last',
      body: createRuleBody,
      responses: {
        201: { description: 'the rule', schema: ruleResult },
        409: { description: '`too_many_rules` (100 per organization), or `concurrent_change`', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: { success: true, rule: await automation.create(principal, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/automation-rules/:id',
      operationId: 'updateAutomationRule',
      summary: 'Change a rule: its name, conditions, actions, whether it stops further rules, whether it is on, or its position',
      params: idParams,
      body: updateRuleBody,
      responses: {
        200: { description: 'the rule', schema: ruleResult },
        404: { description: 'no such rule in the organization', schema: errorSchema },
        409: { description: '`concurrent_change`: retry', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: { success: true, rule: await automation.update(principal, params.id, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/automation-rules/:id',
      operationId: 'deleteAutomationRule',
      summary: 'Remove a rule (the ones after it move up)',
      params: idParams,
      responses: { 204: { description: 'removed' }, 404: { description: 'no such rule in the organization', schema: errorSchema } },
      handler: async ({ principal, params }) => {
        await automation.delete(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
