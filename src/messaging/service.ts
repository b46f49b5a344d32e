import { requireScope } from '../app/principal.js';
import { createHash, randomUUID } from 'node:crypto';
import { AppError, idempotencyKeyReused, notFound } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Channel, ChannelRepo, WhatsAppChannel } from '../store/channels/port.js';
import type { ContactRepo } from '../store/core/port.js';
import { isBusinessScopedUserId, isWebChatContactId, VISITOR_ID_PATTERN, webChatContactId } from '../domain/contact-id.js';
import type { TemplateRecord, TemplateRepo } from '../store/templates/port.js';
import type { CreditRepo } from '../store/credits/port.js';
import type { RateLimiter } from '../store/ratelimit/port.js';
import type { SessionMessageRepo } from '../store/session-messages/port.js';
import type { VisitorRepo } from '../store/visitors/port.js';
import { IDEMPOTENCY_KEY_TTL_MS, type RequestKeyRepo } from '../store/request-keys/port.js';
import { requestFingerprint } from '../domain/fingerprint.js';
import type { GraphTemplateComponent } from '../domain/templates.js';
import { isThrottling } from '../network/graph-api.js';
import { checkTemplateComponents, renderTemplateBody } from '../network/template-rules.js';
import type { MessagingCommand, MessagingReplies, SendReply } from '../actors/conversation/messaging.js';
import type { ConversationCommand, ConversationReplies } from '../actors/conversation/actor.js';
import {
  apiV1Components,
  buttonsMessage,
  contactsMessage,
  locationMessage,
  mediaMessage,
  reactionMessage,
  templateMessage,
  textMessage,
  type ApiV1TemplateSendRequest,
  type ButtonsSendRequest,
  type ContactsSendRequest,
  type LocationSendRequest,
  type ReactionSendRequest,
  type MediaSendRequest,
  type OutboundSend,
  type TemplateSendRequest,
  type TextSendRequest,
} from './requests.js';
import { publicMessage } from '../domain/messages.js';

/**
 * Delivers a command to the contact's conversation actor and returns its
 * reply. The id is the person's canonical one: the services resolve what a
 * caller gave (`ContactRepo.resolve`) before they ask.
 */
export interface ConversationGateway {
  ask<C extends MessagingCommand | ConversationCommand>(organizationId: string, audienceExternalId: string, command: C, idempotencyKey?: string): Promise<(MessagingReplies & ConversationReplies)[C['kind']]>;
}

export interface MessagingServiceDeps {
  channels: ChannelRepo;
  /** Who a contact id names: an alias (a customer's other id) reaches the person's own conversation. */
  contacts: Pick<ContactRepo, 'resolve' | 'get'>;
  templates: TemplateRepo;
  credits: CreditRepo;
  rateLimiter: RateLimiter;
  messages: SessionMessageRepo;
  requestKeys: RequestKeyRepo;
  conversations: ConversationGateway;
  /** Web chat files: an agent's reply names one by `mediaId`. */
  visitors: VisitorRepo;
  /** Credits one template send costs, by category (MARKETING, UTILITY, AUTHENTICATION). */
  prices: Record<string, number>;
  templateRatePerMinute: number;
  log: Logger;
  /**
   * How long one request waits, at most, while the contact's actor waits for
   * the network to report an earlier attempt of the same keyed send (the
   * actor's `SEND_RECOVERY_WAIT_MS`, plus room for the report to land).
   */
  sendInFlightWaitMs: number;
  /** Told how each template send ended (for metrics). */
  observer?: TemplateSendObserver;
}

/** How a template send ended: sent (the network took it), rejected by the network, the network unavailable, or refused for lack of credits. */
export type TemplateSendOutcome = 'sent' | 'rejected' | 'unavailable' | 'insufficient_credits';

export interface TemplateSendObserver {
  /** `credits`: what the send cost (0 unless sent). */
  templateSend(category: string, outcome: TemplateSendOutcome, credits: number): void;
}

type SendCommand = Extract<MessagingCommand, { kind: 'message.send' }>;

/** A send the caller can retry (it gave an idempotency key) names its stored message after the key, so a retry never sends twice. */
function withSendKey(cmd: SendCommand, key: string | undefined): SendCommand {
  return key === undefined ? cmd : { ...cmd, sendKey: key };
}

/** Who a send is from, as the conversation actor records it. */
type SendAs = { sender: 'bot' } | { sender: 'agent'; agentId: string; holder?: string } | { sender: 'system' };
const BOT: SendAs = { sender: 'bot' };
/** Automation's own sends (auto-replies): keyed apart from every API key's. */
const AUTOMATION_SENDER = { keyId: 'automation' } as const;

/** What an agent sends: a free-form message already in the network's shape, or a template by name. */
export type AgentSend = { kind: 'freeform'; send: OutboundSend } | { kind: 'template'; name: string; language: string; components?: GraphTemplateComponent[] };

/** `<phone>:<phone number id>`: how a chat-network contact is named (`<visitor id>:<channel id>` on a web chat). */
export const audienceExternalIdOf = (to: string, channel: Channel) => (channel.kind === 'web_chat' ? webChatContactId(to, channel.id) : `${to}:${channel.phoneNumberId}`);

export interface TemplateSendResult {
  success: true;
  messageId: string;
  timestamp: string;
}

/** Headers of the per-key limit on template sends (IETF RateLimit draft, plus the older trio). */
export type RateLimitHeaders = Record<string, string>;

/**
 * Sends and history, as the REST endpoints (and MCP tools) use them. Checks
 * everything the registry and the organization's channels can tell before a
 * send reaches the contact's actor; the actor then judges the window and the
 * handover on its own state and talks to the network. It checks the caller's
 * scopes itself (like TicketService), so REST routes and MCP tools refuse alike.
 */
export class MessagingService {
  constructor(private readonly d: MessagingServiceDeps) {}

  /**
   * Counts one template-send request of this key (60 a minute by default,
   * shared by every node). Sets the RateLimit headers; throws 429 with
   * Retry-After past the limit.
   */
  async checkTemplateRate(principal: Principal, setHeader: (name: string, value: string) => void): Promise<void> {
    const limit = this.d.templateRatePerMinute;
    const r = await this.d.rateLimiter.hit(`tpl:${principal.keyId}`, limit, 60_000);
    const reset = Math.ceil(r.resetMs / 1000);
    setHeader('RateLimit-Policy', `${limit};w=60`);
    setHeader('RateLimit', `limit=${limit}, remaining=${r.remaining}, reset=${reset}`);
    setHeader('RateLimit-Limit', String(limit));
    setHeader('RateLimit-Remaining', String(r.remaining));
    setHeader('RateLimit-Reset', String(reset));
    if (!r.allowed) {
      const retry = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
      throw new AppError(429, 'rate_limited', `at most ${limit} template sends per minute per API key; retry in ${retry} s`, { limit, windowSeconds: 60 }, { retryAfterSeconds: retry });
    }
  }

  // ------------------------------------------------------------------ templates

  /** `POST /v2/wa/template` (and the deprecated v1, which hides the errors). */
  async sendTemplate(principal: Principal, req: TemplateSendRequest, idempotencyKey?: string): Promise<TemplateSendResult> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'template', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    const channel = await this.chatChannel(principal.organizationId, channelId, 'template');
    const template = await this.approvedTemplate(principal.organizationId, channel, req.template.name, req.template.language.code);
    const components = req.template.components as GraphTemplateComponent[] | undefined;
    this.checkParameters(template, components);
    const send = templateMessage(template.name, template.language, components, renderTemplateBody(template.shape, components));
    const reply = await this.sendCharged(principal, channel, to, template, send, idempotencyKey);
    return { success: true, messageId: reply.messageId, timestamp: reply.sentAt };
  }

  /** `POST /api/v1/whatsapp/send-template`: 404 for a template that is unknown or not approved. */
  async sendApiV1Template(principal: Principal, req: ApiV1TemplateSendRequest, idempotencyKey?: string): Promise<{ message_id: string; status: string }> {
    requireScope(principal, 'chat:send');
    await this.guardKey(principal, idempotencyKey, 'api-v1-template', req);
    const channel = req.channelId !== undefined ? await this.chatChannel(principal.organizationId, req.channelId, 'template') : await this.defaultChatChannel(principal.organizationId);
    const t = await this.d.templates.get(principal.organizationId, channel.id, req.template, req.language);
    if (t === null || t.status !== 'APPROVED') {
      throw new AppError(404, 'template_not_found', `no approved template ${req.template} (${req.language}) on this channel`, { name: req.template, language: req.language, status: t?.status ?? null });
    }
    const components = apiV1Components(req);
    this.checkParameters(t, components);
    const send = templateMessage(t.name, t.language, components, renderTemplateBody(t.shape, components));
    const reply = await this.sendCharged(principal, channel, req.to.replace(/^\+/, ''), t, send, idempotencyKey);
    return { message_id: reply.messageId, status: 'accepted' };
  }

  // ------------------------------------------------------------------ free-form

  /** `POST /v1/messages/buttons`: `success: false` on a channel that is not on the chat network. */
  async sendButtons(principal: Principal, req: ButtonsSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'buttons', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, buttonsMessage(req), idempotencyKey, false);
  }

  /** `POST /v1/messages/media` */
  async sendMedia(principal: Principal, req: MediaSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'media', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, mediaMessage(req), idempotencyKey, false);
  }

  /** `POST /v1/messages/text`: free-form text, under the same window and handover rules as buttons and media. */
  async sendText(principal: Principal, req: TextSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'text', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, textMessage(req), idempotencyKey, true);
  }

  /** `POST /v1/messages/location`: `success: false` on a channel that is not on the chat network. */
  async sendLocation(principal: Principal, req: LocationSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'location', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, locationMessage(req.location), idempotencyKey, false);
  }

  /** `POST /v1/messages/contacts`: `success: false` on a channel that is not on the chat network. */
  async sendContacts(principal: Principal, req: ContactsSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'contacts', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, contactsMessage(req.contacts), idempotencyKey, false);
  }

  /**
   * `POST /v1/messages/reaction`: only to a message of this contact's
   * conversation (422 `no_such_message` otherwise: the network would take any
   * id, and the history could not place it); `success: false` on a channel
   * that is not on the chat network.
   */
  async sendReaction(principal: Principal, req: ReactionSendRequest, idempotencyKey?: string): Promise<{ success: boolean; messageId?: string }> {
    requireScope(principal, 'message:send');
    await this.guardKey(principal, idempotencyKey, 'reaction', req);
    const { channelId, to } = await this.address(principal.organizationId, req);
    return this.sendFreeform(principal, channelId, to, reactionMessage(req.reaction), idempotencyKey, false, async (channel) => {
      const target = await this.d.messages.getByNetworkId(principal.organizationId, req.reaction.messageId);
      if (target === null || target.audienceExternalId !== (await this.personOf(principal.organizationId, to, channel)) || target.direction === 'internal') {
        throw new AppError(422, 'no_such_message', "the reaction names no message of this contact's conversation (give its network id, wamid…)", { messageId: req.reaction.messageId });
      }
    });
  }

  /**
   * `onWebChat`: whether the message goes on a web chat too (text does; buttons and media are chat-network messages).
   * `check`: what the send needs of the chat channel beyond the actor's rules, run before the send reaches the actor.
   */
  private async sendFreeform(principal: Principal, channelId: string, to: string, send: OutboundSend, idempotencyKey: string | undefined, onWebChat: boolean, check?: (channel: Channel) => Promise<void>) {
    requireScope(principal, 'message:send');
    const channel = await this.d.channels.get(principal.organizationId, channelId);
    if (channel === null) throw new AppError(404, 'channel_not_found', 'no channel with this id in the organization', { channelId });
    // The spec's contract for a channel that is not on the chat network: not an error, just no send.
    // On a web chat only text goes, and only to a visitor (`<visitor id>:<channel id>`): there is no phone number to send to.
    if (channel.kind !== 'whatsapp_cloud' && !(onWebChat && VISITOR_ID_PATTERN.test(to))) return { success: false };
    await check?.(channel);
    const sent = await this.askFreeform(principal, channel, to, send, idempotencyKey, BOT);
    return { success: true, messageId: sent.messageId };
  }

  private async askFreeform(principal: Principal, channel: Channel, to: string, send: OutboundSend, idempotencyKey: string | undefined, as: SendAs) {
    const key = this.scopedKey(principal, idempotencyKey);
    const reply = await this.askSend(
      principal.organizationId,
      await this.personOf(principal.organizationId, to, channel),
      withSendKey({ kind: 'message.send', channelId: channel.id, to, policy: 'freeform', message: send.message, content: send.content, ...as }, key),
      key,
    );
    return this.expectSent(reply);
  }

  /**
   * Asks the contact's actor to send. While an earlier attempt of the same
   * keyed send may be at the network (its owner stopped mid-call), the actor
   * answers `send_in_flight` until the network reports that attempt or its
   * wait is over; this request waits that out rather than failing the caller.
   */
  private async askSend(org: string, aeid: string, cmd: SendCommand, key: string | undefined): Promise<SendReply> {
    const deadline = Date.now() + this.d.sendInFlightWaitMs;
    for (;;) {
      try {
        return await this.d.conversations.ask(org, aeid, cmd, key);
      } catch (e) {
        if (!(e instanceof AppError && e.code === 'send_in_flight') || Date.now() >= deadline) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  // ------------------------------------------------------------------ agents (the live inbox)

  /**
   * An agent's message in a contact's conversation, from the live inbox or
   * its REST twin: free-form (under the 24-hour window, like any free-form
   * send) or a template (charged like any template). With `holder`, the
   * contact's actor refuses it (409 `not_assigned_to_you`) unless that agent
   * holds the conversation when the send is its turn.
   */
  async sendAsAgent(principal: Principal, audienceExternalId: string, send: AgentSend, opts: { holder?: string; idempotencyKey?: string } = {}): Promise<{ messageId: string; sessionId: string }> {
    requireScope(principal, 'inbox:write');
    const { channel, to } = await this.conversationChannel(principal.organizationId, audienceExternalId);
    const as: SendAs = { sender: 'agent', agentId: principal.userId, ...(opts.holder === undefined ? {} : { holder: opts.holder }) };
    if (send.kind === 'freeform') {
      let freeform = send.send;
      if (channel.kind === 'web_chat') freeform = await this.webChatFreeform(principal.organizationId, channel.id, to, freeform);
      const sent = await this.askFreeform(principal, channel, to, freeform, opts.idempotencyKey, as);
      return { messageId: sent.messageId, sessionId: sent.sessionId };
    }
    if (channel.kind === 'web_chat') throw new AppError(422, 'not_a_chat_channel', 'templates belong to chat-network (WhatsApp) channels; a web chat takes text');
    const template = await this.approvedTemplate(principal.organizationId, channel, send.name, send.language);
    this.checkParameters(template, send.components);
    const message = templateMessage(template.name, template.language, send.components, renderTemplateBody(template.shape, send.components));
    const sent = await this.sendCharged(principal, channel, to, template, message, opts.idempotencyKey, as);
    return { messageId: sent.messageId, sessionId: sent.sessionId };
  }

  /**
   * What a web chat takes from an agent: text, or a picture or document
   * uploaded for this visitor's conversation (`POST /v1/conversations/{id}/attachments`),
   * named by `mediaId`; its stored type and name go with the message.
   */
  private async webChatFreeform(organizationId: string, channelId: string, visitorId: string, send: OutboundSend): Promise<OutboundSend> {
    const c = send.content;
    if (c.type === 'text') return send;
    if ((c.type !== 'image' && c.type !== 'document') || c.mediaId === undefined) {
      throw new AppError(422, 'not_supported_on_web_chat', `a web chat takes text, and pictures or documents uploaded for the conversation (by mediaId), not ${c.mediaUrl !== undefined ? 'media by link' : `${c.type} messages`}`, { type: c.type });
    }
    const found = /^wca_[0-9a-f]{32}$/.test(c.mediaId) ? await this.d.visitors.getAttachment(organizationId, channelId, c.mediaId) : null;
    if (found === null || found.attachment.visitorId !== visitorId) {
      throw new AppError(422, 'no_such_attachment', 'no file with this mediaId was uploaded for this conversation: upload it with POST /v1/conversations/{id}/attachments first', { mediaId: c.mediaId });
    }
    const a = found.attachment;
    const kind = a.mimeType.startsWith('image/') ? 'image' : 'document';
    if (kind !== c.type) throw new AppError(422, 'attachment_type_mismatch', `this file is ${a.mimeType}: send it as ${kind}`, { mediaId: c.mediaId, type: kind });
    return { ...send, content: { ...c, mimeType: a.mimeType, filename: c.filename ?? a.filename } };
  }

  /**
   * An automation rule's auto-reply in a contact's conversation, as `system`:
   * the text while the 24-hour window is open, else (or without text) the
   * template, charged like any template send. `key` names the reply (its
   * rule firing and action), so a repeat sends it once.
   */
  async sendAutomationReply(organizationId: string, audienceExternalId: string, reply: { text?: string; template?: { name: string; language: string } }, key: string): Promise<{ messageId: string }> {
    const { channel, to } = await this.conversationChannel(organizationId, audienceExternalId);
    if (reply.text !== undefined) {
      const send = textMessage({ text: { body: reply.text } } as TextSendRequest);
      const scoped = this.scopedKey(AUTOMATION_SENDER, `${key}:text`);
      try {
        const r = await this.askSend(organizationId, audienceExternalId, withSendKey({ kind: 'message.send', channelId: channel.id, to, policy: 'freeform', ...send, sender: 'system' }, scoped), scoped);
        return { messageId: this.expectSent(r).messageId };
      } catch (e) {
        if (!(reply.template !== undefined && e instanceof AppError && e.code === 'outside_customer_service_window')) throw e;
      }
    }
    if (channel.kind === 'web_chat') throw new AppError(422, 'not_a_chat_channel', 'templates belong to chat-network (WhatsApp) channels; a web chat takes text');
    const t = await this.approvedTemplate(organizationId, channel, reply.template!.name, reply.template!.language);
    this.checkParameters(t, undefined);
    const message = templateMessage(t.name, t.language, undefined, renderTemplateBody(t.shape, undefined));
    const sent = await this.sendCharged({ organizationId, keyId: AUTOMATION_SENDER.keyId }, channel, to, t, message, `${key}:template`, { sender: 'system' });
    return { messageId: sent.messageId };
  }

  /** The channel a contact's conversation runs on: the one with the phone number id of its `audienceExternalId` (a web chat: the one it names). */
  async conversationChannel(organizationId: string, audienceExternalId: string): Promise<{ channel: Channel; to: string }> {
    const i = audienceExternalId.indexOf(':');
    let to = audienceExternalId.slice(0, i);
    if (isBusinessScopedUserId(to)) {
      // A customer first known by BSUID who shared their number since is sent to by number (Meta's advice: phone numbers keep phone fields in the webhooks).
      to = (await this.d.contacts.get(organizationId, audienceExternalId))?.phone ?? to;
    }
    const channel = i <= 0 ? null : isWebChatContactId(audienceExternalId) ? await this.d.channels.get(organizationId, audienceExternalId.slice(i + 1)) : await this.d.channels.getByPhoneNumberId(audienceExternalId.slice(i + 1));
    if (channel === null || channel.organizationId !== organizationId) {
      throw new AppError(404, 'channel_not_found', 'no chat-network channel of this organization has the phone number id of this conversation', { audienceExternalId });
    }
    return { channel, to };
  }

  /**
   * What the `audienceExternalId`s of a channel's conversations end with: its
   * phone number id (a web chat: its own id). Null when the organization has
   * no such channel.
   */
  async channelConversationSuffix(organizationId: string, channelId: string): Promise<string | null> {
    const channel = await this.d.channels.get(organizationId, channelId);
    if (channel === null) return null;
    return channel.kind === 'whatsapp_cloud' ? channel.phoneNumberId : channel.id;
  }

  // ------------------------------------------------------------------ history

  /**
   * `GET /v1/sessions/{sessionId}/messages`: oldest first, in the order the
   * conversation recorded them (network timestamps have one-second precision
   * and may lag, so the record order is the truthful one); 404 for an unknown
   * session or another organization's.
   */
  async sessionMessages(principal: Principal, sessionId: string, opts: { notes?: boolean } = {}) {
    requireScope(principal, 'conversation:handover:request');
    // Agents' private notes only for a caller who works the inbox and asks for them.
    if (opts.notes === true) requireScope(principal, 'inbox:read');
    const list = await this.d.messages.listSession(principal.organizationId, sessionId, { notes: opts.notes === true });
    if (list === null) throw notFound('session');
    return list.map(publicMessage);
  }

  // ------------------------------------------------------------------ internals

  private async chatChannel(organizationId: string, channelId: string, what: string): Promise<WhatsAppChannel> {
    const channel = await this.d.channels.get(organizationId, channelId);
    if (channel === null) throw new AppError(404, 'channel_not_found', 'no channel with this id in the organization', { channelId });
    if (channel.kind !== 'whatsapp_cloud') {
      throw new AppError(422, 'not_a_chat_channel', `a ${what} can only be sent on a chat-network (WhatsApp) channel; this one is ${channel.kind}`, { channelId, kind: channel.kind });
    }
    return channel;
  }

  private async defaultChatChannel(organizationId: string): Promise<WhatsAppChannel> {
    const all = await this.d.channels.list(organizationId);
    const chat = all.find((c): c is WhatsAppChannel => c.kind === 'whatsapp_cloud');
    if (chat === undefined) throw new AppError(404, 'channel_not_found', 'the organization has no chat-network (WhatsApp) channel');
    return chat;
  }

  private async approvedTemplate(organizationId: string, channel: WhatsAppChannel, name: string, language: string): Promise<TemplateRecord> {
    const t = await this.d.templates.get(organizationId, channel.id, name, language);
    if (t === null) {
      const languages = (await this.d.templates.list(organizationId, channel.id)).filter((x) => x.name === name).map((x) => x.language);
      throw new AppError(
        404,
        'template_not_found',
        languages.length > 0 ? `template ${name} has no ${language} translation on this channel` : `no template named ${name} on this channel`,
        { name, language, availableLanguages: languages },
      );
    }
    if (t.status !== 'APPROVED') {
      throw new AppError(422, 'template_not_approved', `template ${name} (${language}) is ${t.status}, not APPROVED`, { name, language, status: t.status });
    }
    return t;
  }

  private checkParameters(t: TemplateRecord, components: GraphTemplateComponent[] | undefined): void {
    const issues = checkTemplateComponents(t.shape, components);
    if (issues.length > 0) {
      throw new AppError(
        400,
        'invalid_template_parameters',
        `the parameters do not fit template ${t.name} (${t.language}): ${issues[0]!.message}`,
        issues.map((i) => ({ field: i.path, message: i.message, networkCode: i.code })),
      );
    }
  }

  /**
   * Reserves the template's price, then has the contact's actor send it. The
   * actor refunds when the network refuses the message (or never got it);
   * here a refund only happens when the command was refused before the actor
   * could run it.
   */
  private async sendCharged(principal: Pick<Principal, 'organizationId' | 'keyId'>, channel: WhatsAppChannel, given: string, t: TemplateRecord, send: OutboundSend, idempotencyKey?: string, as: SendAs = BOT) {
    const org = principal.organizationId;
    const aeid = await this.personOf(org, given, channel);
    let to = given;
    if (t.category.toUpperCase() === 'AUTHENTICATION' && isBusinessScopedUserId(given)) {
      // The network takes authentication templates (one-tap, zero-tap, copy code) only to a phone number.
      const phone = (await this.d.contacts.get(org, aeid))?.phone;
      if (phone === undefined) {
        throw new AppError(422, 'phone_number_required', 'an authentication template goes only to a phone number, and this customer has not shared theirs: ask for it first (POST /v1/conversations/{id}/request-phone)', {
          to: given,
          category: t.category,
        });
      }
      to = phone;
    }
    const price = this.d.prices[t.category.toUpperCase()] ?? 0;
    const key = this.scopedKey(principal, idempotencyKey);
    const reservationId = key ? 'res_' + createHash('sha256').update(key).digest('base64url').slice(0, 32) : `res_${randomUUID()}`;
    const r = await this.d.credits.reserve(org, reservationId, price);
    const category = t.category.toUpperCase();
    if (!r.ok) {
      this.d.observer?.templateSend(category, 'insufficient_credits', 0);
      throw new AppError(402, 'insufficient_credits', `this template costs ${price} credits; the organization has ${r.balance}`, { price, balance: r.balance, category: t.category });
    }
    let reply: SendReply;
    try {
      reply = await this.askSend(
        org,
        aeid,
        withSendKey(
          { kind: 'message.send', channelId: channel.id, to, policy: 'template', message: send.message, content: send.content, ...as, reservation: { id: reservationId, amount: price } },
          key,
        ),
        key,
      );
    } catch (e) {
      // Refused at the door (mailbox full, bad command): it never ran, so it never will.
      if (e instanceof AppError && (e.code === 'mailbox_full' || e.status === 400 || e.status === 404)) await this.d.credits.release(org, reservationId);
      throw e;
    }
    // Not sent (also when answered from the idempotency key: this retry's reservation may be a new one).
    if (reply.outcome === 'rejected' || (reply.outcome === 'unavailable' && !reply.maybeSent)) await this.d.credits.release(org, reservationId);
    this.d.observer?.templateSend(category, reply.outcome, reply.outcome === 'sent' || (reply.outcome === 'unavailable' && reply.maybeSent) ? price : 0);
    return this.expectSent(reply);
  }

  private expectSent(reply: SendReply): Extract<SendReply, { outcome: 'sent' }> {
    if (reply.outcome === 'sent') return reply;
    if (reply.outcome === 'rejected') {
      const x = reply.rejection;
      // Throttled: nothing was sent and the same send (same Idempotency-Key) may go later.
      const later = isThrottling(x.code);
      throw new AppError(502, 'network_rejected', `the chat network rejected the message: (#${x.code}) ${x.title}${later ? '; nothing was sent: retry after Retry-After, with the same Idempotency-Key' : ''}`, undefined, {
        extra: { errorDetails: { code: x.code, title: x.title, message: x.message } },
        ...(later ? { retryAfterSeconds: 1 } : {}),
      });
    }
    throw new AppError(
      503,
      'network_unavailable',
      reply.maybeSent ? 'the chat network did not confirm the send; it may have been delivered' : 'the chat network is unavailable; nothing was sent',
      { maybeSent: reply.maybeSent },
      { retryAfterSeconds: 5 },
    );
  }

  /**
   * A send's target: `channelId` + `to` as given, or read from the contact's
   * `audienceExternalId` (`<phone>:<phone number id>`), whose phone number id
   * names a channel of the organization.
   */
  private async address(organizationId: string, req: { channelId?: string | undefined; to?: string | undefined; audienceExternalId?: string | undefined }): Promise<{ channelId: string; to: string }> {
    if (req.audienceExternalId === undefined) return { channelId: req.channelId!, to: req.to! };
    const [to, phoneNumberId] = req.audienceExternalId.split(':') as [string, string];
    const channel = isWebChatContactId(req.audienceExternalId) ? await this.d.channels.get(organizationId, phoneNumberId) : await this.d.channels.getByPhoneNumberId(phoneNumberId);
    if (channel === null || channel.organizationId !== organizationId) {
      throw new AppError(404, 'channel_not_found', 'no channel of the organization has the phone number id of this audienceExternalId', { audienceExternalId: req.audienceExternalId });
    }
    return { channelId: channel.id, to };
  }

  /** The canonical id of the person `to` names on the channel (an alias reaches its person's conversation). */
  private async personOf(organizationId: string, to: string, channel: Channel): Promise<string> {
    const aeid = audienceExternalIdOf(to, channel);
    return channel.kind === 'web_chat' ? aeid : this.d.contacts.resolve(organizationId, aeid);
  }

  /** Refuses a key used before, within its lifetime, with another body (the first answer would be replayed for a request never made). */
  private async guardKey(principal: Principal, idempotencyKey: string | undefined, kind: string, body: unknown): Promise<void> {
    const key = this.scopedKey(principal, idempotencyKey);
    if (key === undefined) return;
    const match = await this.d.requestKeys.remember(principal.organizationId, key, requestFingerprint(kind, body), IDEMPOTENCY_KEY_TTL_MS);
    if (match === 'different') throw idempotencyKeyReused();
  }

  /** Idempotency keys are per API key, so two keys never collide. */
  private scopedKey(principal: Pick<Principal, 'keyId'>, key: string | undefined): string | undefined {
    return key === undefined ? undefined : `send:${principal.keyId}:${key}`;
  }
}
