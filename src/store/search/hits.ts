import type { SessionMessage } from '../../domain/messages.js';
import type { MessageHit } from './port.js';

/** A stored message as a hit: what both adapters answer. */
export function messageHit(m: SessionMessage): MessageHit {
  return { sessionId: m.sessionId, messageId: m._id, audienceExternalId: m.audienceExternalId, text: m.content.text ?? m.content.caption ?? '', sentAt: m.sentAt };
}
