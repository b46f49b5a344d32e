import type { Clock } from '../clock.js';
import type { AutomationFiredData, RuleAction } from '../domain/automation.js';
import { isAppError } from '../errors.js';
import type { DomainEvent, EventLog, EventSubscription } from '../events/types.js';
import type { Logger } from '../log.js';
import type { MessagingService } from '../messaging/index.js';

/** Data of `automation.failed`: an action of a rule that fired and could not be carried out, and why. */
export interface AutomationFailedData extends Omit<AutomationFiredData, 'actions'> {
  action: RuleAction;
  code: string;
  reason: string;
}

export interface AutomationEffectsDeps {
  events: EventLog;
  messaging: Pick<MessagingService, 'sendAutomationReply'>;
  /** Writes the failure into the conversation's timeline (a system entry, by its contact's actor); `failureId` names it, so a repeat writes it once. */
  recordFailure(organizationId: string, audienceExternalId: string, failure: { failureId: string; sessionId: string; ruleId: string; ruleName: string; action: string; reason: string }): Promise<void>;
  clock: Clock;
  log: Logger;
  /** Durable consumer name on the event log (default `automation-effects`). */
  consumerName?: string;
}

/**
 * Carries out what automation rules do outside the conversation: the
 * auto-replies of each `automation.fired` event. A durable consumer of the
 * event log, shared by every node (each event is handled by one of them, at
 * least once): a reply is keyed by its event and action, so a redelivery
 * sends it once. A reply the network or the rules refuse (window closed and
 * no template, an unknown template, credits, a rejected send) is recorded as
 * `automation.failed` with the reason and never blocks the conversation; one
 * that could not be tried (network or node unavailable) is retried by the
 * log's redelivery.
 */
export class AutomationEffects {
  private sub: EventSubscription | null = null;

  constructor(private readonly d: AutomationEffectsDeps) {}

  async start(): Promise<void> {
    // Only `automation.fired`: the log filters the rest, so no other event is delivered here and acknowledged unread.
    this.sub ??= await this.d.events.consume(this.d.consumerName ?? 'automation-effects', (e) => this.handle(e), { concurrency: 16, type: 'automation.fired' });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = null;
  }

  async handle(e: DomainEvent): Promise<void> {
    if (e.type !== 'automation.fired') return;
    const { actions, ...fired } = e.data as AutomationFiredData;
    for (const [i, action] of actions.entries()) {
      if (action.type !== 'auto_reply') continue;
      try {
        await this.d.messaging.sendAutomationReply(e.organizationId, fired.audienceExternalId, action, `${e.id}:${i}`);
      } catch (err) {
        if (!isAppError(err) || (err.status >= 500 && err.status !== 502) || err.status === 429) throw err;
        this.d.log.info('an automation rule could not carry out an action', { ruleId: fired.ruleId, action: action.type, code: err.code, reason: err.message });
        await this.d.recordFailure(e.organizationId, fired.audienceExternalId, { failureId: `${e.id}.${i}`, sessionId: fired.sessionId, ruleId: fired.ruleId, ruleName: fired.ruleName, action: action.type, reason: err.message });
        const data: AutomationFailedData = { ...fired, action, code: err.code, reason: err.message };
        await this.d.events.publish({ id: `${e.id}.failed.${i}`, type: 'automation.failed', organizationId: e.organizationId, createdAt: new Date(this.d.clock.now()).toISOString(), data });
      }
    }
  }
}
