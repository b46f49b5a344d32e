import type { SessionMessage } from '../../domain/messages.js';
import { contactAddressOf } from '../../domain/contact-id.js';
import { laterInbound } from '../../domain/service-window.js';
import type { InboundMessageEventData } from '../../messaging/events.js';
import type { HandlerMap } from '../durable.js';
import type { MessagingCommand, MessagingHandlerDeps, MessagingReplies } from './messaging-commands.js';
import { ensureContact, event, sessionFor, stableId } from './messaging-shared.js';
import { isWithHuman } from './rules.js';
import type { ConversationState, Session } from './state.js';
import { derivedMessageId } from '../../domain/message-id.js';
import { DEFAULT_ROUTING, isWithinBusinessHours, routingOf } from '../../domain/routing.js';
import { routeInbound } from './routing.js';
import { systemDraft, timelineMessage } from './timeline.js';
import { runAutomation, type RuleEffects } from './automation.js';
import type { LabelRepo } from '../../store/labels/port.js';
import { labelNameKey, MAX_LABELS_PER_TARGET, type Label } from '../../domain/labels.js';
import { startTarget, targetToStart } from './sla.js';
import { conversationPriority } from './priority.js';

/* `network.inbound`: a customer's message, routed, run through the organization's rules, and stored. */

export function inboundHandler(deps: MessagingHandlerDeps): Pick<HandlerMap<ConversationState, MessagingCommand, MessagingReplies>, 'network.inbound'> {
  return {
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
      const taken: ConversationState = { ...s, contactId, session: counted, lastInboundAt: laterInbound(s.lastInboundAt, at), ...customerOf(s, e) };
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
  };
}

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

/** The customer's ids as this message names them, when they differ from what the state keeps (else nothing, so the state stays as it is). */
function customerOf(s: ConversationState, e: { customer?: { userId?: string; username?: string } }): { customer?: { userId?: string; username?: string } } {
  const userId = e.customer?.userId ?? s.customer?.userId;
  const username = e.customer?.username ?? s.customer?.username;
  if (userId === s.customer?.userId && username === s.customer?.username) return {};
  return { customer: { ...(userId === undefined ? {} : { userId }), ...(username === undefined ? {} : { username }) } };
}
