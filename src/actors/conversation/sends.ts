import { AppError } from '../../errors.js';
import { messagesPerSecondOf, type WhatsAppChannel } from '../../store/channels/port.js';
import { networkAccountOf, NetworkUnavailableError } from '../../network/port.js';
import { isThrottling } from '../../network/graph-api.js';
import type { SessionMessage } from '../../domain/messages.js';
import { customerServiceWindow } from '../../domain/service-window.js';
import type { MessageSentEventData } from '../../messaging/events.js';
import type { HandlerContext, HandlerMap } from '../durable.js';
import type { MessagingCommand, MessagingHandlerDeps, MessagingReplies, SendReply } from './messaging-commands.js';
import { chargeOfAttempt, chargesOf, keyedSendRecordId, lateCopyReservationId, resendReservationId } from './charges.js';
import { parkedStatusesOf } from './statuses.js';
import { bothSettled, ensureContact, event, rememberMessage, sessionFor, sessionOf, stableId, webChatMessageId, withEvents } from './messaging-shared.js';
import { isWithHuman } from './rules.js';
import { callbackData, echoOf, inFlightOf, withInFlight, withoutInFlight, withUnpaid } from './send-recovery.js';
import type { ConversationState, SendInFlight, Session } from './state.js';
import { randomMessageId } from '../../domain/message-id.js';
import { botAnswered } from './routing.js';
import { responseGiven } from './sla.js';

/* `message.send`: one send to the network, in the contact's order, recorded in flight first so it leaves once across failover. */

export function sendHandler(deps: MessagingHandlerDeps): Pick<HandlerMap<ConversationState, MessagingCommand, MessagingReplies>, 'message.send'> {
  const { refund, refundFailed } = chargesOf(deps);
  const { applyParked } = parkedStatusesOf(deps, refundFailed);
  /**
   * Waits for the number's turn, last before the request leaves (so the
   * network sees the tier, whatever happens before), inside the contact's
   * actor (so one contact's sends keep their order). A backlog past
   * `pacingMaxWaitMs` refuses the send: nothing has left, the caller retries.
   */
  const paced = async (channel: WhatsAppChannel): Promise<void> => {
    if (deps.pacer === undefined) return;
    const perSecond = messagesPerSecondOf(channel);
    const maxWaitMs = deps.pacingMaxWaitMs ?? 0;
    const turn = await deps.pacer.reserve(channel.id, perSecond, maxWaitMs);
    if (!turn.ok) {
      const retry = Math.max(1, Math.ceil(turn.retryAfterMs / 1000));
      throw new AppError(
        429,
        'throughput_backlog_full',
        `this number sends at most ${perSecond} messages per second and ${maxWaitMs / 1000} s of sends are already waiting; retry in ${retry} s`,
        { channelId: channel.id, messagesPerSecond: perSecond, maxWaitMs },
        { retryAfterSeconds: retry },
      );
    }
    if (turn.waitMs >= 1) await new Promise((r) => setTimeout(r, turn.waitMs));
  };

  return {
    'message.send': async (s, cmd, ctx) => {
      const messageRecordId = cmd.sendKey === undefined ? randomMessageId() : keyedSendRecordId(s.organizationId, s.audienceExternalId, cmd.sendKey);

      /** The send reached the network as `networkMessageId`: store it (or find the copy stored first) and answer with what is stored. */
      const record = async (base: ConversationState, networkMessageId: string) => {
        const session = sessionFor(base, ctx);
        const sentAt = ctx.now.toISOString();
        const message: SessionMessage = {
          _id: messageRecordId,
          sessionId: session.id,
          organizationId: s.organizationId,
          channelId: cmd.channelId,
          audienceExternalId: s.audienceExternalId,
          direction: 'outbound',
          sender: cmd.sender,
          content: cmd.content,
          sentAt,
          messageId: networkMessageId,
          status: 'accepted',
          statusUpdatedAt: sentAt,
        };
        if (cmd.agentId !== undefined) message.agentId = cmd.agentId;
        // A resend's stored copy carries its own charge: a `failed` report for it refunds that copy.
        if (copyCharge !== undefined) message.charge = { reservationId: copyCharge.id, amount: copyCharge.amount };
        else if (cmd.reservation !== undefined) message.charge = { reservationId: cmd.reservation.id, amount: cmd.reservation.amount };
        // Stored before the actor's own write (unlike inbound messages and statuses): the message has
        // left, and its status webhooks must find it even if this run stops here. The contact (first
        // send only) and the message are independent writes: side by side, both durable before the commit.
        const write = () => bothSettled(ensureContact(deps, base, ctx, null), deps.messages.append(message));
        // A known contact with no status parked for this message: the message (with its session, one
        // statement) is the only write before the commit, and needs no transaction around it.
        const alone = base.contactId !== null && !(base.parkedStatuses ?? []).some((p) => p.networkMessageId === networkMessageId);
        const [contactId, appended] = alone && ctx.apart !== undefined ? await ctx.apart(write) : await write();
        // One answer per key: a copy stored first under the key's record (a former owner's, late) is the answer.
        const stored = appended ? message : ((await deps.messages.get(s.organizationId, messageRecordId)) ?? message);
        return finish(base, stored, stored === message ? session : undefined, contactId);
      };

      /** The reply, state and events of a send whose message is stored, with the statuses reported before it was. */
      const finish = async (base: ConversationState, stored: SessionMessage, session?: Session, knownContactId?: string) => {
        // As stored, unless statuses parked for it change it now (then its statuses read it back).
        if (!(base.parkedStatuses ?? []).some((p) => p.networkMessageId === stored.messageId)) rememberMessage(ctx, stored);
        const applied = await applyParked(base, stored, ctx);
        // The contact this run already made sure of is not written a second time.
        const contactId = knownContactId ?? (await ensureContact(deps, applied.state, ctx, null));
        const next = { ...applied.state, contactId, session: session ?? sessionOf(applied.state, stored) };
        return withEvents(sentOutcome(s, cmd, ctx, next, stored), applied.events);
      };

      let attempt = 1;
      /**
       * What pays for a resend: a charge of its own (`.copyN`) when the earlier attempt may have
       * arrived, else the earlier attempt's charge, taken over (`inherited`).
       */
      let copyCharge: { id: string; amount: number; inherited: boolean } | undefined;
      /** The earlier attempt whose charge this resend takes over: charged after all if a status of it comes. */
      let unpaid: { attempt: number; key: string } | undefined;
      const target = await deps.channels.get(s.organizationId, cmd.channelId);
      if (target?.kind === 'web_chat') {
        // No network and no 24-hour window: the message is stored, and its `message.sent` event
        // (in the durable log every node follows) is what reaches the visitor's socket, on any node.
        if (cmd.sendKey !== undefined) {
          const earlier = await deps.messages.get(s.organizationId, messageRecordId);
          if (earlier !== null && earlier.messageId !== null) return finish(s, earlier);
        }
        if (cmd.holder !== undefined && !(s.handover.status === 'agent' && s.handover.agentId === cmd.holder)) {
          throw new AppError(409, 'not_assigned_to_you', 'you do not hold this conversation: take it first', { handover: s.handover.status });
        }
        if (cmd.policy === 'template') throw new AppError(422, 'not_a_chat_channel', 'templates belong to chat-network (WhatsApp) channels; a web chat takes text');
        if (cmd.sender === 'bot' && isWithHuman(s.handover)) {
          throw new AppError(409, 'conversation_with_agent', 'a human agent has this conversation; the bot may not write until it is handed back', { handover: s.handover.status });
        }
        return record(s, webChatMessageId(messageRecordId));
      }
      if (cmd.sendKey !== undefined) {
        const key = cmd.sendKey;
        // Also under the id such a send had before message ids had one scheme, so a retry across an upgrade still finds its first run.
        const earlier =
          (await deps.messages.get(s.organizationId, messageRecordId)) ?? (await deps.messages.get(s.organizationId, stableId('out', s.organizationId, s.audienceExternalId, key)));
        // A retry of a send whose first run reached the network and stored the message, then stopped
        // before its state and event were recorded (crash, lost partition): finish that run, send nothing.
        if (earlier !== null && earlier.messageId !== null) return finish(withoutInFlight(s, key), earlier);
        const flying = inFlightOf(s, key);
        if (flying !== undefined) {
          // An earlier attempt may have reached the network, and its sender stopped before recording
          // the outcome. The network says which attempt arrived: a status echoing its callback data.
          const echo = echoOf(s, key, flying.attempt);
          if (echo !== undefined) return record(withoutInFlight(s, key), echo.networkMessageId);
          if (ctx.now.getTime() - Date.parse(flying.startedAt) < deps.sendRecoveryWaitMs) {
            throw new AppError(503, 'send_in_flight', 'an earlier attempt of this send may have reached the chat network; waiting for the network to report it', undefined, { retryAfterSeconds: 1 });
          }
          // Nothing came: the network has no idempotency to ask with, so sending again is the only way
          // on, and it delivers a second copy if the first did arrive and all its statuses were lost.
          attempt = flying.attempt + 1;
          // Who pays for this copy. An earlier attempt whose owner learned it was handed to the network
          // (a timeout, a connection broken after the request was written) may well be there: it keeps
          // its charge and this copy pays its own. One whose owner stopped mid-call, with no status for
          // it in all the wait, is taken as never having left (its owner died or paused before the
          // request was written, or wrote it on a connection the network had already closed): this copy
          // takes over its charge, else the balance would pay for a copy the network never had.
          if (cmd.reservation !== undefined) {
            const { amount } = cmd.reservation;
            copyCharge =
              flying.maybeSent === true
                ? { id: resendReservationId(cmd.reservation.id, attempt), amount, inherited: false }
                : { id: chargeOfAttempt(cmd.reservation.id, flying), amount, inherited: true };
            if (copyCharge.inherited) unpaid = { attempt: flying.attempt, key };
          }
          deps.log.warn('keyed send sent again: no status came for its earlier attempt', { callbackData: callbackData(s.organizationId, s.audienceExternalId, key, attempt), attempt });
          deps.onResend?.({ attempt });
        }
      }
      // Everything before the network call: a refusal here means nothing left, so nothing is charged.
      const prepare = async () => {
        if (cmd.holder !== undefined && !(s.handover.status === 'agent' && s.handover.agentId === cmd.holder)) {
          throw new AppError(409, 'not_assigned_to_you', 'you do not hold this conversation: take it first', { handover: s.handover.status });
        }
        // The channel read once at the top of the command: a second read could see another answer.
        const channel = target;
        if (channel === null || channel.kind !== 'whatsapp_cloud') {
          throw new AppError(404, 'channel_not_found', 'no chat-network channel with this id in the organization');
        }
        if (cmd.policy === 'freeform') {
          const window = customerServiceWindow(s.lastInboundAt, ctx.now);
          if (!window.open) {
            throw new AppError(
              422,
              'outside_customer_service_window',
              'the customer has not written in the last 24 hours: only a template can reopen the conversation',
              { lastInboundAt: s.lastInboundAt, closedAt: window.closedAt },
            );
          }
          if (cmd.sender === 'bot' && isWithHuman(s.handover)) {
            throw new AppError(409, 'conversation_with_agent', 'a human agent has this conversation; the bot may send templates only until it is handed back', {
              handover: s.handover.status,
            });
          }
        }
        const network = deps.networkFor(channel);
        await paced(channel);
        return { channel, network };
      };
      let prepared: Awaited<ReturnType<typeof prepare>>;
      try {
        prepared = await prepare();
      } catch (e) {
        await refund(s, cmd.reservation);
        throw e;
      }
      const { channel, network } = prepared;
      const account = networkAccountOf(channel);
      if (copyCharge !== undefined) {
        // Reserved under an id of its own per attempt (a re-run of this attempt is not charged twice),
        // before the checkpoint: without the credits no further copy leaves, and the send stays in flight.
        // A charge taken over is held already, and this changes nothing (unless it was given back since).
        const r = await deps.credits.reserve(s.organizationId, copyCharge.id, copyCharge.amount);
        if (!r.ok) {
          throw new AppError(402, 'insufficient_credits', `sending this template again costs ${copyCharge.amount} credits; the organization has ${r.balance}`, {
            price: copyCharge.amount,
            balance: r.balance,
          });
        }
      }
      /** A copy that did not leave gives its charge back (the first attempt's own stays with the key, as before). */
      const releaseCopy = async () => {
        if (copyCharge !== undefined) await deps.credits.release(s.organizationId, copyCharge.id);
      };
      // In flight, durably and fenced, before the request leaves: a successor will not send blindly.
      const inFlight: SendInFlight | undefined =
        cmd.sendKey === undefined ? undefined : { key: cmd.sendKey, attempt, startedAt: ctx.now.toISOString(), ...(copyCharge?.inherited === true ? { paidBy: copyCharge.id } : {}) };
      const withUnpaidAttempt =
        unpaid === undefined || cmd.reservation === undefined
          ? s
          : withUnpaid(
              s,
              {
                callbackData: callbackData(s.organizationId, s.audienceExternalId, unpaid.key, unpaid.attempt),
                reservationId: lateCopyReservationId(cmd.reservation.id, unpaid.attempt),
                amount: cmd.reservation.amount,
                since: ctx.now.toISOString(),
              },
              ctx.now,
            );
      const flying = inFlight === undefined ? s : withInFlight(withUnpaidAttempt, inFlight);
      if (flying !== s) {
        try {
          await ctx.checkpoint(flying);
        } catch (e) {
          // This run never sent the copy (lost ownership, or the write failed): its own charge goes back.
          // A charge it took over stays: it still pays for the earlier attempt, which stays in flight.
          if (copyCharge?.inherited !== true) await releaseCopy();
          throw e;
        }
      }
      const landed = cmd.sendKey === undefined ? s : withoutInFlight(flying, cmd.sendKey);
      let outcome;
      try {
        outcome = await network.send(account, cmd.to, cmd.message, callbackData(s.organizationId, s.audienceExternalId, cmd.sendKey ?? messageRecordId, attempt));
      } catch (e) {
        if (!(e instanceof NetworkUnavailableError)) throw e;
        // Charged only if it may have left; a refused connection sent nothing.
        if (!e.maybeSent) await releaseCopy();
        const refunded = e.maybeSent ? false : await refund(s, cmd.reservation);
        deps.log.warn('chat network unavailable', { channelId: channel.id, maybeSent: e.maybeSent, err: e });
        // It may have left: still in flight, now known to have been handed over (so it stays paid for if
        // it must be sent again), and a retry waits for the network's report of it. Either way the reply
        // is not the key's answer: a retry with the same key runs again (recovers, or sends anew).
        const state = !e.maybeSent ? landed : inFlight === undefined ? flying : withInFlight(flying, { ...inFlight, maybeSent: true });
        return { state, reply: { outcome: 'unavailable', maybeSent: e.maybeSent, message: e.message, refunded }, forget: true };
      }
      if (!outcome.ok) {
        await releaseCopy();
        const reply: SendReply = { outcome: 'rejected', rejection: outcome.rejection, refunded: await refund(s, cmd.reservation) };
        // A throttled send is "not now": not the key's answer, so a retry with the same key sends it.
        return { state: landed, reply, forget: isThrottling(outcome.rejection.code) };
      }
      return record(landed, outcome.messageId);
    },
  };
}

/** The reply, state and `message.sent` event of a send whose message is stored. */
function sentOutcome(
  s: ConversationState,
  cmd: Extract<MessagingCommand, { kind: 'message.send' }>,
  ctx: HandlerContext,
  next: ConversationState & { contactId: string; session: Session },
  message: SessionMessage,
) {
  const messageId = message.messageId!;
  const data: MessageSentEventData = {
    messageId,
    channelId: message.channelId,
    audienceExternalId: s.audienceExternalId,
    contactId: next.contactId,
    sessionId: message.sessionId,
    to: cmd.to,
    sender: cmd.sender,
    content: message.content,
    status: 'accepted',
    timestamp: message.sentAt,
  };
  return {
    // The bot (or an agent) answered: the bot's fallback is off until the customer writes again. Automation's own messages do not count.
    // An agent's answer ends the customer's response target (and clears its flag).
    state: cmd.sender === 'system' ? next : cmd.sender === 'agent' ? responseGiven(botAnswered(next), true) : botAnswered(next),
    reply: { outcome: 'sent', messageId, sessionId: message.sessionId, contactId: next.contactId, sentAt: message.sentAt, _id: message._id } satisfies SendReply,
    events: [event('message.sent', stableId('sent', s.organizationId, messageId), next, ctx.now, data)],
  };
}

