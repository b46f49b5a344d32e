import type { MessageShape, SessionUser } from './api/types';
import { senderLabel } from './components/MessageList';

/** How many of the latest messages a new ticket quotes. */
const QUOTED = 5;

/**
 * What a ticket made from a contact or a conversation starts with: a subject
 * naming the contact, and a description with links back to the contact page
 * and the conversation and the last messages quoted, to edit before creating it.
 */
export function ticketPrefill(o: { contactId: string | null; name: string; conversationId: string | null; messages: MessageShape[]; me: SessionUser }): { subject: string; description: string } {
  const lines: string[] = [];
  if (o.contactId !== null) lines.push(`Contact: ${location.origin}/contacts/${encodeURIComponent(o.contactId)}`);
  if (o.conversationId !== null) lines.push(`Conversation: ${location.origin}/inbox/${encodeURIComponent(o.conversationId)}`);
  const quoted = o.messages.filter((m) => m.sender !== 'system').slice(-QUOTED);
  if (quoted.length > 0) {
    lines.push('', 'Last messages:');
    for (const m of quoted) {
      const c = m.content as { type: string; text?: string; caption?: string };
      lines.push(`> ${senderLabel(m, o.me)}: ${c.text ?? c.caption ?? `(${c.type})`}`);
    }
  }
  return { subject: `Follow-up for ${o.name}`, description: lines.join('\n') };
}
