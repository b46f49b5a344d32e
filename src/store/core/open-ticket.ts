import { openTicketOf, type Ticket } from '../../domain/types.js';
import type { TicketRepo } from './port.js';

/** Tickets of a contact looked at for its open one, newest first. */
const TICKETS_LOOKED_AT = 50;

/** A contact's open ticket (its newest neither resolved nor closed) among its newest tickets; undefined when it has none. */
export async function contactOpenTicket(tickets: Pick<TicketRepo, 'list'>, organizationId: string, contactId: string): Promise<Ticket | undefined> {
  const page = await tickets.list({ organizationId, audienceId: contactId, offset: 0, limit: TICKETS_LOOKED_AT });
  return openTicketOf(page.tickets);
}
