import type { MessageShape } from '../api/types';

const LABEL: Record<NonNullable<MessageShape['status']>, string> = {
  accepted: 'accepted',
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
};

/** An outbound message's delivery state; a failure names the network's reason. */
export function MessageStatus({ message }: { message: MessageShape }) {
  if (message.direction !== 'outbound' || message.status === undefined) return null;
  if (message.status === 'failed') {
    const reason = message.errors?.map((e) => `${e.title || e.message} (${e.code})`).join('; ') || 'no reason given';
    return (
      <span class="status failed" data-status="failed">
        failed: {reason}
      </span>
    );
  }
  return (
    <span class={`status ${message.status}`} data-status={message.status}>
      {LABEL[message.status]}
    </span>
  );
}
