import type { TicketService } from '../app/tickets.js';
import { ToolRegistry } from './registry.js';
import type { McpServerDef } from './request-server.js';
import type { ToolDef } from './tool.js';
import { ticketTools } from './tickets-tools.js';
import { conversationTools, type ConversationToolDeps } from './conversation-tools.js';
import { inboxTools } from './inbox-tools.js';
import type { InboxService } from '../inbox/index.js';

/** The platform's integration id: `{mcp_url}/mcp/platform`, the same for every organization. */
export const PLATFORM_INTEGRATION_ID = 'platform';

/** The application services the platform tools call (the same ones behind the REST API). */
export interface PlatformDeps {
  tickets: TicketService;
  /** Handover, history and sends. */
  conversations: ConversationToolDeps;
  /** The live inbox: list the queue, take, reply, hand back. */
  inbox?: InboxService;
  /** More tools (the conformance run's fixture). */
  extraTools?: ToolDef[];
}

const INSTRUCTIONS = [
  'Switchboard platform: the support desk of the organization that owns your API key.',
  'Tickets: list_tickets to find tickets (filter by status or contact), get_ticket for one, create_ticket to hand a problem to the human team, update_ticket to change status, priority or assignee, comment_on_ticket to note something for the team.',
  'Contacts are named by audienceExternalId, `<phone>:<phone number id>` on the chat network.',
  'Conversations: get_conversation_history to read one (by sessionId, or the latest of a contact); send_text_message, send_buttons_message, send_media_message, send_location_message, send_contacts_message and send_reaction to answer the customer',
  '(only within 24 hours of their last message, and never while a human has the conversation); request_handover to hand the conversation to a human agent.',
  'Live inbox (for agent assistants): list_conversations (status queued is the waiting queue), take_conversation, reply_in_conversation as the agent who holds it, hand_back_conversation.',
  'Every tool acts with your API key and needs its scope; a tool error that names a missing scope will not go away by retrying.',
].join('\n');

export function platformServer(deps: PlatformDeps, version: string): McpServerDef {
  return {
    id: PLATFORM_INTEGRATION_ID,
    name: 'switchboard-platform',
    title: 'Switchboard platform',
    version,
    instructions: INSTRUCTIONS,
    registry: new ToolRegistry([...ticketTools(deps.tickets), ...conversationTools(deps.conversations), ...(deps.inbox ? inboxTools(deps.inbox) : []), ...(deps.extraTools ?? [])]),
  };
}
