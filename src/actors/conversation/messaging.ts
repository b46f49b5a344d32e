import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import type { DomainEvent } from '../../events/types.js';
import type { Logger } from '../../log.js';
import type { ContactRepo, TicketRepo } from '../../store/core/port.js';
import { messagesPerSecondOf, type ChannelRepo, type WhatsAppChannel } from '../../store/channels/port.js';
import type { SendPacer } from '../../store/send-pacing/port.js';
import type { CreditRepo } from '../../store/credits/port.js';
import type { SessionMessageRepo } from '../../store/session-messages/port.js';
import { NetworkUnavailableError, type ChatNetwork, type NetworkRejection } from '../../network/port.js';
import { isThrottling, type GraphMessage } from '../../network/graph-api.js';
import type { InboundMessageEvent, StatusEvent } from '../../network/inbound.js';
import { nextStatus, type MessageStatus } from '../../domain/message-status.js';
import type { MessageContent, SessionMessage } from '../../domain/messages.js';
import type { ContactIdentity } from '../../domain/types.js';
import { contactAddressOf } from '../../domain/contact-id.js';
import { customerServiceWindow, laterInbound } from '../../domain/service-window.js';
import type { InboundMessageEventData, MessageSentEventData, MessageStatusEventData } from '../../messaging/events.js';
import type { HandlerContext, HandlerMap } from '../durable.js';
import { currentSession, isWithHuman } from './rules.js';
import { callbackData, echoOf, inFlightOf, unpaidAttemptOf, withInFlight, withoutInFlight, withoutParked, withParked, withUnpaid } from './send-recovery.js';
import type { ConversationState, ParkedStatus, SendInFlight, Session } from './state.js';
import { derivedMessageId, randomMessageId } from '../../domain/message-id.js';
import { DEFAULT_ROUTING, isWithinBusinessHours, routingOf } from '../../domain/routing.js';
import type { AutomationRuleRepo } from '../../store/automation/port.js';
import { botAnswered, routeInbound } from './routing.js';
import { systemDraft, timelineMessage } from './timeline.js';
import { runAutomation, type RuleEffects } from './automation.js';
import type { LabelRepo } from '../../store/labels/port.js';
import { labelNameKey, MAX_LABELS_PER_TARGET, type Label } from '../../domain/labels.js';
import { responseGiven, startTarget, targetToStart } from './sla.js';
import { conversationPriority } from './priority.js';

/*
 * The conversation actor's messaging commands: sends, inbound
 * customer messages and network status updates. They run in the contact's
 * actor, so sends to one contact leave one at a time in order, and the 24-hour
 * window and handover are judged on the actor's own, current state.
 */

export interface MessagingHandlerDeps {
  channels: ChannelRepo;
  /** The network a channel talks to (the Graph API or the sandbox network). */
  networkFor(channel: WhatsAppChannel): ChatNetwork;
  messages: SessionMessageRepo;
  contacts: ContactRepo;
  /** The contacts' tickets: the open one's priority picks the response targets of a channel that sets them by priority. Absent: no priority. */
  tickets?: Pick<TicketRepo, 'list'>;
  credits: CreditRepo;
  log: Logger;
  /**
   * How long a successor waits for the network to report an earlier attempt
   * of a keyed send (a status echoing its callback data) before it sends again.
   */
  sendRecoveryWaitMs: number;
  /** Called when a keyed send goes to the network again because no status came for its earlier attempt. */
  onResend?(info: { attempt: number }): void;
  /** Each phone number's send budget (its tier), shared by every node. Absent: sends are not paced. */
  pacer?: SendPacer;
  /** A send waits at most this long for its number's turn; past it the send is refused with 429. */
  pacingMaxWaitMs?: number;
  /** The organizations' automation rules, run on each customer message. Absent: none run. */
  rules?: AutomationRuleRepo;
  /** The organizations' labels: rules test them and put them on conversations. Absent: a rule sees none and cannot add one. */
  labels?: LabelRepo;
}

const isObjectWithType = (v: unknown) => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';

export const messagingCommandSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('message.send'),
    channelId: z.string().min(1),
    /** The customer's number on the chat network; the visitor's id on a web chat. */
    to: z.string().regex(/^(?:[0-9]{7,15}|[A-Z]{2}\.[0-9A-Za-z]{1,128}|v_[0-9a-f]{24})$/),
    /** `template` sends go whatever the window and handover; `freeform` ones are checked against both. */
    policy: z.enum(['template', 'freeform']),
    message: z.custom<GraphMessage>(isObjectWithType, 'message must be a network message'),
    content: z.custom<MessageContent>(isObjectWithType, 'content must be message content'),
    sender: z.enum(['bot', 'agent', 'system']),
    agentId: z.string().optional(),
    /** The send goes only while this agent holds the conversation (an agent's reply from the inbox). */
    holder: z.string().min(1).optional(),
    /** Credits reserved for this send; the actor refunds them when the network refuses it. */
    reservation: z.object({ id: z.string().min(1), amount: z.number().int().min(0) }).optional(),
    /**
     * The caller's idempotency key, when it gave one: the stored message is
     * named after it, so a retry that finds the message knows the send left
     * (its first run stopped before the actor recorded it) and finishes it
     * instead of sending a second time.
     */
    sendKey: z.string().min(1).optional(),
  }),
  z.object({ kind: z.literal('network.inbound'), channelId: z.string().min(1), event: z.custom<InboundMessageEvent>((v) => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'message') }),
  z.object({
    kind: z.literal('network.status'),
    channelId: z.string().min(1),
    event: z.custom<StatusEvent>((v) => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'status'),
    /** The stored message's `_id` as the webhook receiver found it: a hint that saves a lookup, checked against the network's id. */
    messageRecordId: z.string().min(1).optional(),
  }),
]);
export type MessagingCommand = z.infer<typeof messagingCommandSchema>;

export type SendReply =
  | { outcome: 'sent'; messageId: string; sessionId: string; contactId: string; sentAt: string; _id: string }
  | { outcome: 'rejected'; rejection: NetworkRejection; refunded: boolean }
  | { outcome: 'unavailable'; maybeSent: boolean; message: string; refunded: boolean };

export interface InboundReply {
  duplicate: boolean;
  sessionId: string | null;
}

export interface StatusReply {
  applied: boolean;
  status: MessageStatus | null;
  /** The message is not stored yet: the status is kept and applied once it is. */
  parked?: boolean;
}

export interface MessagingReplies {
  'message.send': SendReply;
  'network.inbound': InboundReply;
  'network.status': StatusReply;
}

/** The kinds above, to tell a messaging command from the actor's other commands. */
export const MESSAGING_COMMAND_KINDS: ReadonlySet<string> = new Set(['message.send', 'network.inbound', 'network.status']);

/** Handlers for a node that was started without messaging: every messaging command is refused. */
export function messagingUnavailableHandlers(): HandlerMap<ConversationState, MessagingCommand, MessagingReplies> {
  const refuse = () => {
    throw new AppError(503, 'messaging_unavailable', 'chat messaging is not configured on this node', undefined, { retryAfterSeconds: 5 });
  };
  return { 'message.send': refuse, 'network.inbound': refuse, 'network.status': refuse };
}

/** Ids derived from the network's ids, so a re-run after a crash republishes the same event (stores the same message), not a new one. */
function stableId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}`;
}

/** The reservation charging copy `attempt` (2, 3, …) of a resent keyed send; copy 1 is charged under the send's own reservation. */
export function resendReservationId(reservationId: string, attempt: number): string {
  return `${reservationId}.copy${attempt}`;
}

/** The reservation charging copy `attempt` of a keyed send when a status of it comes after a resend took over its charge. */
export function lateCopyReservationId(reservationId: string, attempt: number): string {
  return `${reservationId}.late${attempt}`;
}

/** The reservation that pays for an attempt in flight: its own (the send's for attempt 1, `.copyN` for a resend), or the one it took over. */
function chargeOfAttempt(reservationId: string, f: SendInFlight): string {
  return f.paidBy ?? (f.attempt === 1 ? reservationId : resendReservationId(reservationId, f.attempt));
}

/** The stored message of a keyed send: named after the key, so every run and every copy of the send meets at one record. */
export function keyedSendRecordId(organizationId: string, audienceExternalId: string, sendKey: string): string {
  return derivedMessageId('keyed-send', organizationId, audienceExternalId, sendKey);
}

/** Messages an actor keeps in its memo (`HandlerContext.memo`), newest last: a send's status webhooks come while it is among them. */
const MEMO_MESSAGES = 8;

/** `m` as this actor just stored it: its statuses need not read it back. */
function rememberMessage(ctx: HandlerContext, m: SessionMessage): void {
  const memo = ctx.memo;
  if (memo === undefined) return;
  const k = `message:${m._id}`;
  memo.delete(k);
  memo.set(k, m);
  if (memo.size > MEMO_MESSAGES) memo.delete(memo.keys().next().value!);
}

/** The message with record id `id` as this actor last stored it, if it remembers it. */
function recalledMessage(ctx: HandlerContext, id: string | undefined): SessionMessage | null {
  return id === undefined ? null : ((ctx.memo?.get(`message:${id}`) as SessionMessage | undefined) ?? null);
}

function event<T>(type: string, id: string, s: ConversationState, now: Date, data: T): DomainEvent<T> {
  return { id, type, organizationId: s.organizationId, createdAt: now.toISOString(), data };
}

async function ensureContact(deps: MessagingHandlerDeps, s: ConversationState, ctx: HandlerContext, name: string | null, identity: ContactIdentity = {}): Promise<string> {
  const learns = name !== null || Object.keys(identity).length > 0;
  if (s.contactId !== null) {
    // A contact made by a send or by an operator learns the name the customer goes by, and their ids.
    if (learns) await deps.contacts.noteIdentity(s.organizationId, s.audienceExternalId, identity, name);
    return s.contactId;
  }
  if (learns) {
    const existing = await deps.contacts.get(s.organizationId, s.audienceExternalId);
    if (existing !== null) return (await deps.contacts.noteIdentity(s.organizationId, existing.audienceExternalId, identity, name))?.id ?? existing.id;
  }
  const c = await deps.contacts.upsert({ id: ctx.newId(), organizationId: s.organizationId, audienceExternalId: s.audienceExternalId, name, createdAt: ctx.now.toISOString(), ...identity });
  return c.id;
}

/**
 * The session a new message goes into: the latest while it is open, else a
 * new one. The log learns about it from the message's own append (same write).
 */
function sessionFor(s: ConversationState, ctx: HandlerContext): Session {
  return currentSession(s, ctx.now, ctx.newId());
}

export function messagingHandlers(deps: MessagingHandlerDeps): HandlerMap<ConversationState, MessagingCommand, MessagingReplies> {
  /** The send did not happen: its reservation goes back and is forgotten (a retry with the same key is charged anew). */
  const refund = async (s: ConversationState, reservation: { id: string } | undefined): Promise<boolean> => {
    if (reservation === undefined) return false;
    return (await deps.credits.release(s.organizationId, reservation.id)).released;
  };
  /** The network does not bill a message it could not deliver; at most once per reservation. */
  const refundFailed = async (m: SessionMessage): Promise<void> => {
    if (m.charge !== undefined) await deps.credits.refund(m.organizationId, m.charge.reservationId);
  };

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
      const account = { phoneNumberId: channel.phoneNumberId, businessAccountId: channel.businessAccountId, accessToken: channel.credentials.accessToken, ...(channel.graphApiVersion === undefined ? {} : { graphApiVersion: channel.graphApiVersion }) };
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

    'network.inbound': async (s, cmd, ctx) => {
      const e = cmd.event;
      // Never let a network timestamp push the window past what really happened.
      const at = Date.parse(e.at) > ctx.now.getTime() ? ctx.now.toISOString() : e.at;
      // The message is stored only after the state and its event are recorded (afterCommit), so a
      // stored message means a finished run: a redelivery of it is a duplicate, and anything short
      // of that (a crash, a lost partition, a store error) is simply run again.
      const existing = await deps.messages.getByNetworkId(s.organizationId, e.networkMessageId);
      if (existing !== null) return { state: s, reply: { duplicate: true, sessionId: existing.sessionId } };
      const contactId = await ensureContact(deps, s, ctx, e.profileName ?? null, e.customer ?? {});
      const session = sessionFor(s, ctx);
      const message: SessionMessage = {
        // Named by the network's id, so two runs of this message (a re-run, a paused former owner) store it once.
        _id: derivedMessageId('inbound', s.organizationId, e.networkMessageId),
        sessionId: session.id,
        organizationId: s.organizationId,
        channelId: cmd.channelId,
        audienceExternalId: s.audienceExternalId,
        direction: 'inbound',
        sender: 'contact',
        content: e.content,
        sentAt: at,
        messageId: e.networkMessageId,
      };
      if (e.replyTo !== undefined) message.replyTo = e.replyTo;
      const counted: Session = { ...session, inboundCount: (session.inboundCount ?? 0) + 1 };
      // The customer writing again after an agent resolved the conversation reopens it: a system entry before the message.
      const reopened =
        s.session !== null && s.session.status === 'resolved' && session.id !== s.session.id
          ? [systemDraft(`reopen:${e.networkMessageId}`, session.id, ctx.now, { event: 'reopened', by: { type: 'contact' } })]
          : [];
      const taken: ConversationState = { ...s, contactId, session: counted, lastInboundAt: laterInbound(s.lastInboundAt, at) };
      // The channel's routing: straight to the queue, or the bot's fallback timer (its settings are read as of this message).
      const [channel, ruleSet] = await Promise.all([deps.channels.get(s.organizationId, cmd.channelId), deps.rules?.get(s.organizationId)]);
      const routing = channel === null ? DEFAULT_ROUTING : routingOf(channel);
      const routed = routeInbound(s, taken, routing, ctx.now, stableId('route', s.organizationId, e.networkMessageId));
      // Then the organization's rules, once per message, on the conversation as routing left it.
      const open = isWithinBusinessHours(routing.businessHours, ctx.now);
      let attributes: Promise<Record<string, string>> | undefined;
      // Reopened first (stored before the message), then what routing and the rules wrote (queued by automation, rules fired).
      const routedEntries = routed.state.timeline !== s.timeline ? (routed.state.timeline ?? []) : [];
      const automated = await runAutomation(
        routed.state,
        routedEntries,
        ruleSet?.rules ?? [],
        {
          networkMessageId: e.networkMessageId,
          channelId: cmd.channelId,
          awayReply: open ? null : (routing.businessHours?.awayReply ?? null),
          businessHours: routing.businessHours,
          input: {
            content: e.content,
            channelId: cmd.channelId,
            withinBusinessHours: open,
            attribute: async (name) => {
              attributes ??= deps.contacts.get(s.organizationId, s.audienceExternalId).then((c) => c?.attributes ?? {});
              return (await attributes)[name] ?? null;
            },
            labels: async () => (deps.labels === undefined ? [] : labelsOfConversation(deps.labels, s.organizationId, s.audienceExternalId, contactId)),
          },
        },
        ctx.now,
        (...parts) => stableId('auto', s.organizationId, e.networkMessageId, ...parts),
        deps.labels === undefined ? undefined : labelEffects(deps.labels, s.organizationId, s.audienceExternalId),
      );
      const made = automated.state.timeline !== s.timeline ? (automated.state.timeline ?? []) : [];
      // The customer now waits for an answer: a response target starts, unless an earlier message's runs.
      // The conversation's priority is read only when it can matter: a target starts and the channel sets targets by priority.
      const priority =
        deps.tickets !== undefined && targetToStart(automated.state) !== null && Object.keys(routing.sla.byPriority).length > 0
          ? await conversationPriority(deps.tickets, s.organizationId, contactId, automated.events)
          : null;
      const targeted = startTarget(automated.state, routing.sla, ctx.now, { priority, businessHours: routing.businessHours });
      const next = reopened.length === 0 ? targeted : { ...targeted, timeline: [...reopened, ...made] };
      const data: InboundMessageEventData = {
        messageId: e.networkMessageId,
        channelId: cmd.channelId,
        audienceExternalId: s.audienceExternalId,
        contactId,
        sessionId: session.id,
        from: e.from ?? e.customer?.userId ?? contactAddressOf(s.audienceExternalId),
        phone: e.customer?.phone ?? null,
        userId: e.customer?.userId ?? null,
        username: e.customer?.username ?? null,
        profileName: e.profileName ?? null,
        content: e.content,
        receivedAt: at,
        // As the message leaves it: one that the channel's routing queued is the queue's, not the bot's.
        handover: isWithHuman(next.handover),
        handoverStatus: next.handover.status,
      };
      if (e.replyTo !== undefined) data.replyTo = e.replyTo;
      return {
        state: next,
        reply: { duplicate: false, sessionId: session.id },
        events: [event('inbound_message', stableId('in', s.organizationId, e.networkMessageId), next, ctx.now, data), ...routed.events, ...automated.events],
        afterCommit: async () => {
          // The entry is in the state too: if this stops before it, the projection stores it before anything else.
          for (const d of reopened) await deps.messages.append(timelineMessage(s, d, cmd.channelId));
          await deps.messages.append(message);
        },
      };
    },

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
type StatusReport = Pick<ParkedStatus, 'networkMessageId' | 'status' | 'at' | 'recipientId' | 'recipientUserId' | 'errors'>;

/** The names and ids of the labels on a conversation and on its contact (what a rule's `label` condition tests). */
async function labelsOfConversation(labels: LabelRepo, organizationId: string, audienceExternalId: string, contactId: string): Promise<string[]> {
  const [onConversation, onContact] = await Promise.all([labels.labelsOf(organizationId, 'conversation', [audienceExternalId]), labels.labelsOf(organizationId, 'contact', [contactId])]);
  const ids = [...(onConversation.get(audienceExternalId) ?? []), ...(onContact.get(contactId) ?? [])];
  if (ids.length === 0) return [];
  const byId = new Map((await labels.list(organizationId)).map((l) => [l.id, l.name]));
  return ids.flatMap((id) => [id, ...(byId.has(id) ? [byId.get(id)!] : [])]);
}

/** A rule's `add_label`: the label named (by id, or by name in any case) put on the conversation; attaching twice changes nothing. */
function labelEffects(labels: LabelRepo, organizationId: string, audienceExternalId: string): RuleEffects {
  return {
    async addLabel(ref) {
      const all = await labels.list(organizationId);
      const label = all.find((l) => l.id === ref) ?? all.find((l) => labelNameKey(l.name) === labelNameKey(ref));
      if (label === undefined) return { ok: false, code: 'unknown_label', reason: `no label named "${ref}" in the organization` };
      const before = (await labels.labelsOf(organizationId, 'conversation', [audienceExternalId])).get(audienceExternalId) ?? [];
      if (!before.includes(label.id) && (await labels.attach(organizationId, 'conversation', audienceExternalId, [label.id], MAX_LABELS_PER_TARGET)) === 'too_many') {
        return { ok: false, code: 'too_many_labels', reason: `a conversation carries at most ${MAX_LABELS_PER_TARGET} labels` };
      }
      const now = (await labels.labelsOf(organizationId, 'conversation', [audienceExternalId])).get(audienceExternalId) ?? [];
      const shown = (l: Label) => ({ id: l.id, name: l.name, color: l.color });
      const byId = new Map(all.map((l) => [l.id, l]));
      return { ok: true, label: shown(label), labels: now.flatMap((id) => (byId.has(id) ? [shown(byId.get(id)!)] : [])), added: !before.includes(label.id) };
    },
  };
}

/** A status report moving `m` to `to`: the message as it is then stored, and the event that says so. */
function statusChange(s: ConversationState, m: SessionMessage, e: StatusReport, to: MessageStatus, now: Date) {
  const updated: SessionMessage & { status: MessageStatus } = { ...m, status: to, statusUpdatedAt: e.at };
  const data: MessageStatusEventData = {
    messageId: e.networkMessageId,
    status: e.status,
    timestamp: e.at,
    channelId: m.channelId,
    audienceExternalId: m.audienceExternalId,
    sessionId: m.sessionId,
    recipientId: e.recipientId ?? contactAddressOf(m.audienceExternalId),
    userId: e.recipientUserId ?? null,
  };
  if (e.errors.length > 0) {
    updated.errors = e.errors;
    data.errors = e.errors;
  }
  return { updated, event: event('message_status', stableId('st', s.organizationId, e.networkMessageId, e.status), s, now, data) };
}

/** A web chat message's id (what the network's id is on the chat network): named after its stored record. */
export const webChatMessageId = (recordId: string): string => `webchat.${recordId}`;

/** Waits for both writes (neither is left running when the command fails); both values, or the first failure. */
async function bothSettled<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/** The session a stored message went into, as the state should hold it: the open one, unless a newer one opened since. */
function sessionOf(s: ConversationState, m: SessionMessage): Session {
  return s.session?.status === 'open' ? s.session : { id: m.sessionId, status: 'open', openedAt: m.sentAt };
}

function withEvents<T extends { events: DomainEvent[] }>(o: T, before: DomainEvent[]): T {
  return before.length === 0 ? o : { ...o, events: [...before, ...o.events] };
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

