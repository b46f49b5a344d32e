/*
 * The states a sent message goes through, and the order they may follow.
 * A pure rule over plain data: the conversation actor and every store of
 * session messages apply the same one.
 */

export const MESSAGE_STATUSES = ['accepted', 'sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const RANK: Record<MessageStatus, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 1.5 };

/**
 * The status a message moves to when the network reports `reported`, or null
 * when the report is stale and changes nothing. Statuses only move forward:
 * accepted → sent → delivered → read. `failed` is final and can only follow
 * accepted or sent (a message the customer's phone has is not failed by a
 * late, reordered report). A repeat of the current status is stale too, so a
 * redelivered webhook is not reported twice.
 */
export function nextStatus(current: MessageStatus, reported: MessageStatus): MessageStatus | null {
  if (current === 'failed' || reported === 'accepted') return null;
  if (reported === 'failed') return current === 'accepted' || current === 'sent' ? 'failed' : null;
  return RANK[reported] > RANK[current] ? reported : null;
}
