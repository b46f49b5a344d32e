import type { Clock } from '../clock.js';
import type { AutomationFailedData, AutomationFiredData, RuleAction } from '../domain/automation.js';
import type { TicketPriority } from '../domain/types.js';
import { AppError, isAppError } from '../errors.js';
import type { DomainEvent, EventLog, EventSubscription } from '../events/types.js';
import type { Logger } from '../log.js';
import type { MessagingService } from '../messaging/index.js';

export type { AutomationFailedData };

export interface AutomationEffectsDeps {
  events: EventLog;
  messaging: Pick<MessagingService, 'sendAutomationReply'>;
  /** What rules do to tickets (no user acts: the service does). */
  tickets: {
    createByAutomation(organizationId: string, input: { subject: string; description: string; audienceExternalId: string }, onceKey: string): Promise<{ ticketId: string; title: string } | null>;
    setPriorityByAutomation(organizationId: string, audienceExternalId: string, priority: TicketPriority): Promise<{ ticketId: string; priority: string } | null>;
  };
  /** Writes what a ticket action did into the conversation's timeline (a system entry naming the rule); `entryId` names it, so a repeat writes it once. */
  recordEntry(organizationId: string, audienceExternalId: string, entry: { entryId: string; sessionId: string; ruleId: string; ruleName: string; event: 'ticket_created' | 'priority_set'; ticketId: string; subject?: string; priority?: string }): Promise<void>;
  /** Writes the failure into the conversation's timeline (a system entry, by its contact's actor); `failureId` names it, so a repeat writes it once. */
  recordFailure(organizationId: string, audienceExternalId: string, failure: { failureId: string; sessionId: string; ruleId: string; ruleName: string; action: string; reason: string }): Promise<void>;
  clock: Clock;
  log: Logger;
  /** Durable consumer name on the event log (default `automation-effects`). */
  consumerName?: string;
}

/**
 * Carries out what automation rules do outside the conversation: the
 * auto-replies and the ticket actions (create a ticket, set the open
 * ticket's priority) of each `automation.fired` event. A durable consumer of the
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
    this.sub ??= await this.d.events.consume(this.d.consumerName ?? 'automation-effects', (e) => this.handle(e), { concurrency: 16, types: ['automation.fired'] });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = null;
  }

  async handle(e: DomainEvent): Promise<void> {
    if (e.type !== 'automation.fired') return;
    const { actions, ...fired } = e.data as AutomationFiredData;
    for (const [i, action] of actions.entries()) {
      if (action.type !== 'auto_reply' && action.type !== 'create_ticket' && action.type !== 'set_priority') continue;
      try {
        if (action.type === 'auto_reply') await this.d.messaging.sendAutomationReply(e.organizationId, fired.audienceExternalId, action, `${e.id}:${i}`);
        else await this.ticketAction(e, fired, action, i);
      } catch (err) {
        if (!isAppError(err) || (err.status >= 500 && err.status !== 502) || err.status === 429) throw err;
        this.d.log.info('an automation rule could not carry out an action', { ruleId: fired.ruleId, action: action.type, code: err.code, reason: err.message });
        await this.d.recordFailure(e.organizationId, fired.audienceExternalId, { failureId: `${e.id}.${i}`, sessionId: fired.sessionId, ruleId: fired.ruleId, ruleName: fired.ruleName, action: action.type, reason: err.message });
        const data: AutomationFailedData = { ...fired, action, code: err.code, reason: err.message };
        await this.d.events.publish({ id: `${e.id}.failed.${i}`, type: 'automation.failed', organizationId: e.organizationId, createdAt: new Date(this.d.clock.now()).toISOString(), data });
      }
    }
  }

  /** A rule's ticket action, keyed by the event and the action (a redelivery creates or changes nothing twice), and its timeline entry. */
  private async ticketAction(e: DomainEvent, fired: Omit<AutomationFiredData, 'actions'>, action: Extract<RuleAction, { type: 'create_ticket' | 'set_priority' }>, i: number): Promise<void> {
    const { organizationId } = e;
    const base = { entryId: `${e.id}.${i}`, sessionId: fired.sessionId, ruleId: fired.ruleId, ruleName: fired.ruleName };
    if (action.type === 'create_ticket') {
      const description = `Created by the automation rule "${fired.ruleName}" on the customer's message ${fired.messageId}.`;
      const t = await this.d.tickets.createByAutomation(organizationId, { subject: action.subject, description, audienceExternalId: fired.audienceExternalId }, `${e.id}.${i}`);
      if (t === null) throw new AppError(422, 'no_contact', 'the conversation has no contact to link a ticket to');
      await this.d.recordEntry(organizationId, fired.audienceExternalId, { ...base, event: 'ticket_created', ticketId: t.ticketId, subject: t.title });
      return;
    }
    const t = await this.d.tickets.setPriorityByAutomation(organizationId, fired.audienceExternalId, action.priority);
    if (t === null) throw new AppError(422, 'no_open_ticket', "the conversation's contact has no open ticket to set the priority of");
    await this.d.recordEntry(organizationId, fired.audienceExternalId, { ...base, event: 'priority_set', ticketId: t.ticketId, priority: action.priority });
  }
}
