import { z } from 'zod';
import { CONDITION_FIELDS, CONDITION_OPERATORS, compilePattern } from '../domain/automation.js';
import { CONTENT_TYPES } from '../domain/messages.js';
import { TICKET_PRIORITIES } from '../domain/types.js';

/*
 * Automation rules as the API takes and shows them (`/v1/automation-rules`).
 */

export const MAX_RULES = 100;

const fieldSchema = z
  .string()
  .refine((f) => (CONDITION_FIELDS as readonly string[]).includes(f) || /^attribute\.[A-Za-z0-9_.-]{1,64}$/.test(f), {
    message: `one of ${CONDITION_FIELDS.join(', ')}, or attribute.<name>`,
  })
  .describe(`what is tested: ${CONDITION_FIELDS.join(', ')}, or attribute.<name> (a custom attribute of the contact); label: any label of the conversation or of the contact, by name or id`);

export const conditionSchema = z
  .object({
    field: fieldSchema,
    operator: z.enum(CONDITION_OPERATORS),
    value: z.union([z.string().min(1).max(500), z.array(z.string().min(1).max(200)).min(1).max(50)]).describe('a string, or a list (`in`, and `contains` any of them)'),
  })
  .strict()
  .superRefine((c, ctx) => {
    const bad = (message: string) => ctx.addIssue({ code: 'custom', path: ['value'], message });
    if (c.operator === 'in' && !Array.isArray(c.value)) bad('in takes a list of values');
    if (c.operator === 'matches') {
      if (Array.isArray(c.value)) bad('matches takes one pattern');
      else if (compilePattern(c.value) === null) bad('not a valid regular expression');
    }
    if (c.field === 'businessHours' && (c.operator !== 'is' || (c.value !== 'open' && c.value !== 'closed'))) {
      ctx.addIssue({ code: 'custom', path: ['operator'], message: 'businessHours takes operator is with value open or closed' });
    }
    if (c.operator === 'is' && c.field !== 'businessHours') ctx.addIssue({ code: 'custom', path: ['operator'], message: 'is tests businessHours; use equals or in' });
    if (c.field === 'label' && c.operator === 'matches' && Array.isArray(c.value)) bad('matches takes one pattern');
    if (c.field === 'type') {
      for (const v of Array.isArray(c.value) ? c.value : [c.value]) {
        if (!(CONTENT_TYPES as readonly string[]).includes(v)) bad(`a message type: ${CONTENT_TYPES.join(', ')}`);
      }
    }
  })
  .meta({ examples: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }] });

export const actionSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('request_handover') }).strict(),
    z
      .object({
        type: z.literal('assign'),
        agentId: z.string().min(1).max(64).optional().describe('a user of the organization: the conversation goes to them at once'),
        teamId: z.string().min(1).max(64).optional().describe("a team of the organization: the conversation is queued in the team's queue"),
      })
      .strict()
      .refine((a) => (a.agentId === undefined) !== (a.teamId === undefined), 'give agentId or teamId, not both'),
    z
      .object({
        type: z.literal('auto_reply'),
        text: z.string().trim().min(1).max(4096).optional().describe('sent inside the 24-hour window (a customer just wrote)'),
        template: z
          .object({ name: z.string().min(1).max(512), language: z.string().min(1).max(16) })
          .strict()
          .optional()
          .describe('a template without variables, sent when the window is closed by the time the reply goes (or when no text is given); charged like any template'),
      })
      .strict()
      .refine((a) => a.text !== undefined || a.template !== undefined, 'give text, template or both'),
    z.object({ type: z.literal('add_label'), label: z.string().trim().min(1).max(100).describe("a label of the organization, by name or id, put on the conversation") }).strict(),
    z.object({ type: z.literal('set_priority'), priority: z.enum(TICKET_PRIORITIES).describe("the priority of the conversation's open ticket (its newest one not resolved or closed)") }).strict(),
    z.object({ type: z.literal('create_ticket'), subject: z.string().trim().min(1).max(200).describe("a ticket with this subject, linked to the conversation's contact") }).strict(),
    z.object({ type: z.literal('webhook'), event: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'lowercase letters, digits, _ . -').describe('named in the automation.webhook event') }).strict(),
  ])
  .meta({ examples: [{ type: 'request_handover' }] });

const ruleFields = {
  name: z.string().trim().min(1).max(200),
  enabled: z.boolean(),
  position: z.number().int().min(0).max(MAX_RULES).describe('0-based place in the evaluation order; past the end: last'),
  conditions: z.array(conditionSchema).max(20).describe('all must hold; none: every customer message'),
  actions: z.array(actionSchema).min(1).max(10),
  stop: z.boolean().describe('when this rule fires, the rules after it are not evaluated for the message'),
};

export const createRuleBody = z
  .object({
    name: ruleFields.name,
    enabled: ruleFields.enabled.default(true),
    position: ruleFields.position.optional(),
    conditions: ruleFields.conditions.default([]),
    actions: ruleFields.actions,
    stop: ruleFields.stop.default(false),
  })
  .strict()
  .meta({
    examples: [{ name: 'Talk to an agent', conditions: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }], actions: [{ type: 'request_handover' }, { type: 'auto_reply', text: 'An agent will be with you shortly.' }], stop: true }],
  });
export type CreateRuleBody = z.infer<typeof createRuleBody>;

export const updateRuleBody = z
  .object({
    name: ruleFields.name.optional(),
    enabled: ruleFields.enabled.optional(),
    position: ruleFields.position.optional(),
    conditions: ruleFields.conditions.optional(),
    actions: ruleFields.actions.optional(),
    stop: ruleFields.stop.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, enabled, position, conditions, actions, stop')
  .meta({ examples: [{ enabled: false }] });
export type UpdateRuleBody = z.infer<typeof updateRuleBody>;

export const ruleView = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  position: z.number().int(),
  conditions: z.array(
    z
      .object({ field: z.string(), operator: z.enum(CONDITION_OPERATORS), value: z.union([z.string(), z.array(z.string())]) })
      .meta({ examples: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }] }),
  ),
  actions: z.array(z.object({ type: z.string() }).catchall(z.unknown())),
  stop: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RuleView = z.infer<typeof ruleView>;
