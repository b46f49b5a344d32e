import type { AutomationFiredData } from '../../domain/automation.js';
import type { TicketPriority } from '../../domain/types.js';
import type { DomainEvent } from '../../events/types.js';
import { contactOpenTicket } from '../../store/core/open-ticket.js';
import type { TicketRepo } from '../../store/core/port.js';

/*
 * A conversation's priority is the priority of its contact's open ticket
 * (the newest neither resolved nor closed): what an agent sets on the
 * ticket and what a rule's `set_priority` sets. Read when a response target
 * starts, so the targets of that priority apply.
 */

/**
 * The conversation's priority for a target starting at a customer message:
 * the open ticket's, as the rules that fired on this very message leave it
 * (their ticket actions are carried out just after, from their events, in
 * the order given: `create_ticket` makes a new open ticket of priority
 * `medium`, `set_priority` sets the open ticket's when there is one). Null:
 * no open ticket.
 */
export async function conversationPriority(tickets: Pick<TicketRepo, 'list'>, organizationId: string, contactId: string, fired: DomainEvent[]): Promise<TicketPriority | null> {
  let priority = (await contactOpenTicket(tickets, organizationId, contactId))?.priority ?? null;
  for (const e of fired) {
    if (e.type !== 'automation.fired') continue;
    for (const action of (e.data as AutomationFiredData).actions) {
      if (action.type === 'create_ticket') priority = 'medium';
      else if (action.type === 'set_priority' && priority !== null) priority = action.priority;
    }
  }
  return priority;
}
