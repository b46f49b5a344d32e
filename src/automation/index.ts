export { AutomationService, type AutomationServiceDeps } from './service.js';
export { createRuleBody, updateRuleBody, ruleView, conditionSchema, actionSchema, MAX_RULES, type CreateRuleBody, type UpdateRuleBody, type RuleView } from './schemas.js';
export { AutomationEffects, type AutomationEffectsDeps, type AutomationFailedData } from './effects.js';
