import { createHash, randomBytes } from 'node:crypto';

/**
 * Stored chat messages (inbound and outbound; sent by the bot, an agent, a template send or the
 * API) are all named one way: `msg_` and 32 URL-safe base64 characters (192 bits). The chat
 * network's own id (`wamid…`) is a separate field, `messageId`, since a message the network never
 * accepted has none and the network's ids are not ours to shape.
 */
export const MESSAGE_ID_PATTERN = /^msg_[A-Za-z0-9_-]{32}$/;

/** A fresh id, for a message nothing else names. */
export function randomMessageId(): string {
  return 'msg_' + randomBytes(24).toString('base64url');
}

/**
 * An id derived from what names the message (an inbound message's network id, a keyed send's
 * idempotency key), so two runs of it store one record. `kind` keeps the derivations apart.
 */
export function derivedMessageId(kind: 'inbound' | 'keyed-send' | 'timeline', ...parts: string[]): string {
  return 'msg_' + createHash('sha256').update([kind, ...parts].join('\u0000')).digest('base64url').slice(0, 32);
}
