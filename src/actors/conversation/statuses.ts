import type { DomainEvent } from '../../events/types.js';
import { nextStatus, type MessageStatus } from '../../domain/message-status.js';
import type { SessionMessage } from '../../domain/messages.js';
import { contactAddressOf } from '../../domain/contact-id.js';
import type { MessageStatusEventData } from '../../messaging/events.js';
import type { HandlerContext, HandlerMap } from '../durable.js';
import type { MessagingCommand, MessagingHandlerDeps, MessagingReplies } from './messaging-commands.js';
import { chargesOf } from './charges.js';
import { event, recalledMessage, rememberMessage, stableId } from './messaging-shared.js';
import { unpaidAttemptOf, withoutParked, withParked } from './send-recovery.js';
import type { ConversationState, ParkedStatus } from './state.js';

/* Status reports of the network: applied forward only, parked while their message is not stored yet. */

/** The statuses parked for messages not stored yet, applied once they are. */
export function parkedStatusesOf(deps: MessagingHandlerDeps, refundFailed: (m: SessionMessage) => Promise<void>) {
  /**
   * Applies the statuses of `message` the network reported before it was
   * stored, in the order they came, and drops them from the state. They are
   * written before the commit (like the sent message itself): the network
   * was answered 200 for them and will not report them again.
   */
  const applyParked = async (s: ConversationState, message: SessionMessage, ctx: HandlerContext<ConversationState>) => {
    const mine = (s.parkedStatuses ?? []).filter((p) => p.networkMessageId === message.messageId);
    if (mine.length === 0) return { state: s, events: [] as DomainEvent[] };
    const events: DomainEvent[] = [];
    let stored: SessionMessage = message;
    for (const p of mine) {
      const to = nextStatus(stored.status ?? 'accepted', p.status);
      if (to === null) continue;
      const change = statusChange(s, stored, p, to, ctx.now);
      const r = await deps.messages.advanceStatus(change.updated);
      if (!r.applied) continue;
      stored = change.updated;
      if (r.status === 'failed') await refundFailed(stored);
      events.push(change.event);
    }
    return { state: withoutParked(s, new Set([message.messageId!]), ctx.now), events };
  };

  /** Applies parked statuses whose messages have been stored since (by a former owner that resumed). */
  const drainParked = async (s: ConversationState, ctx: HandlerContext<ConversationState>) => {
    let state = withoutParked(s, new Set(), ctx.now);
    const events: DomainEvent[] = [];
    for (const id of new Set((state.parkedStatuses ?? []).map((p) => p.networkMessageId))) {
      const m = await deps.messages.getByNetworkId(s.organizationId, id);
      if (m === null || m.direction !== 'outbound') continue;
      const applied = await applyParked(state, m, ctx);
      state = applied.state;
      events.push(...applied.events);
    }
    return { state, events };
  };
  return { applyParked, drainParked };
}

/** `network.status`: a status of a message the business sent. */
export function statusHandler(deps: MessagingHandlerDeps): Pick<HandlerMap<ConversationState, MessagingCommand, MessagingReplies>, 'network.status'> {
  const { refundFailed } = chargesOf(deps);
  const { drainParked } = parkedStatusesOf(deps, refundFailed);
  return {
    'network.status': async (s0, cmd, ctx) => {
      const e = cmd.event;
      // A copy taken as never having left is reported after all: it is at the network, and is paid for
      // (or, reported failed, given back: the network does not bill it). Both at most once per copy.
      const late = unpaidAttemptOf(s0, e.callbackData, ctx.now);
      if (late !== undefined) {
        if (e.status === 'failed') await deps.credits.refund(s0.organizationId, late.reservationId);
        else if (!(await deps.credits.reserve(s0.organizationId, late.reservationId, late.amount)).ok) {
          deps.log.warn('a copy reported after its charge was taken over could not be charged: not enough credits', { callbackData: late.callbackData, amount: late.amount });
        }
      }
      const drained = await drainParked(s0, ctx);
      const s = drained.state;
      // The message as this actor stored it (its send, its last status) saves reading it back; the
      // status write below is conditional on the stored status whichever was read.
      const hinted = recalledMessage(ctx, cmd.messageRecordId) ?? (cmd.messageRecordId === undefined ? null : await deps.messages.get(s.organizationId, cmd.messageRecordId));
      const m = hinted !== null && hinted.messageId === e.networkMessageId ? hinted : await deps.messages.getByNetworkId(s.organizationId, e.networkMessageId);
      if (m === null) {
        // Reported before its message is stored (a copy whose sender stopped or paused before storing it):
        // kept, fenced, and applied once it is stored. If this write fails the receiver answers 503 and
        // the network redelivers.
        return { state: withParked(s, e, ctx.now), reply: { applied: false, status: null, parked: true }, events: drained.events };
      }
      if (m.direction !== 'outbound') return { state: s, reply: { applied: false, status: null }, events: drained.events };
      const current = m.status ?? 'accepted';
      const to = nextStatus(current, e.status);
      if (to === null) {
        // A redelivered or late report changes nothing and publishes nothing: the stored status is
        // written only after its event was recorded, so a stored status already has its event.
        // A repeated failure still makes sure of its refund (the run that stored it may have stopped before it).
        if (current === 'failed' && e.status === 'failed') await refundFailed(m);
        return { state: s, reply: { applied: false, status: current }, events: drained.events };
      }
      const { updated, event: reported } = statusChange(s, m, e, to, ctx.now);
      return {
        state: s,
        reply: { applied: true, status: to },
        events: [...drained.events, reported],
        // Stored once the event is recorded (so a run cut short in between is run again by the
        // network's redelivery and records it), and only forward, whoever writes (advanceStatus).
        afterCommit: async () => {
          const r = await deps.messages.advanceStatus(updated);
          if (r.applied) rememberMessage(ctx, updated);
          else ctx.memo?.delete(`message:${updated._id}`);
          if (r.status === 'failed') await refundFailed(m);
        },
      };
    },
  };
}

/** What the network reported about a message, reported here or parked earlier. */
export type StatusReport = Pick<ParkedStatus, 'networkMessageId' | 'status' | 'at' | 'recipientId' | 'recipientUserId' | 'errors'>;

/** A status report moving `m` to `to`: the message as it is then stored, and the event that says so. */
export function statusChange(s: ConversationState, m: SessionMessage, e: StatusReport, to: MessageStatus, now: Date) {
  const updated: SessionMessage & { status: MessageStatus } = { ...m, status: to, statusUpdatedAt: e.at };
  const data: MessageStatusEventData = {
    messageId: e.networkMessageId,
    status: e.status,
    timestamp: e.at,
    channelId: m.channelId,
    audienceExternalId: m.audienceExternalId,
    sessionId: m.sessionId,
    recipientId: e.recipientId ?? contactAddressOf(m.audienceExternalId),
    userId: e.recipientUserId ?? s.customer?.userId ?? null,
    username: s.customer?.username ?? null,
  };
  if (e.errors.length > 0) {
    updated.errors = e.errors;
    data.errors = e.errors;
  }
  return { updated, event: event('message_status', stableId('st', s.organizationId, e.networkMessageId, e.status), s, now, data) };
}

