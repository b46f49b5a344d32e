import type { MessageStatus } from '../domain/message-status.js';
import type { MessageContent, NetworkErrorDetails } from '../domain/messages.js';
import { isBusinessScopedUserId, PHONE_DIGITS_PATTERN } from '../domain/contact-id.js';
import {
  graphErrorTitle,
  webhookEnvelopeSchema,
  webhookMessageSchema,
  webhookStatusSchema,
  webhookValueSchema,
  type GraphWebhookError,
  type GraphWebhookMessage,
} from './graph-api.js';

/**
 * Who a customer is, as far as one webhook shows: each part optional. A
 * customer who hides their number behind a username comes with a BSUID and
 * no phone; one who never adopted a username comes with both.
 */
export interface CustomerIdentity {
  /** Their number, digits only (`from`, `contacts[].wa_id`). */
  phone?: string;
  /** Their business-scoped user id (`from_user_id`, `contacts[].user_id`). */
  userId?: string;
  /** Their parent BSUID, shared across a managed business's portfolios. */
  parentUserId?: string;
  /** The username they go by on WhatsApp (`contacts[].profile.username`). */
  username?: string;
}

/** A system message's news about the customer's identifiers: a new number, or a new BSUID. */
export interface IdentityChange {
  kind: 'user_changed_number' | 'user_changed_user_id';
  /** The new number (`user_changed_number`). */
  phone?: string;
  /** The new BSUID, when the webhook names it. */
  userId?: string;
  /** The BSUID the customer had before (a new number brings a new BSUID too). */
  previousUserId?: string;
}

/** A customer's message, as the network webhook reported it. */
export interface InboundMessageEvent {
  kind: 'message';
  businessAccountId: string;
  phoneNumberId: string;
  /** The customer's number, digits only; absent when they hide it (then `customer.userId` names them). */
  from?: string;
  /** Every identifier the webhook gave for the customer. */
  customer: CustomerIdentity;
  profileName?: string;
  /** A system message that the customer's number or BSUID changed. */
  identityChange?: IdentityChange;
  /** The network's id of the customer's message. */
  networkMessageId: string;
  at: string;
  content: MessageContent;
  /** The business message this one answers (button taps, quoted replies). */
  replyTo?: string;
}

/** A status update of a message the business sent. */
export interface StatusEvent {
  kind: 'status';
  businessAccountId: string;
  phoneNumberId: string;
  networkMessageId: string;
  /** The customer's phone number (absent when they hide it) and business-scoped user id. */
  recipientId?: string;
  recipientUserId?: string;
  status: Exclude<MessageStatus, 'accepted'>;
  at: string;
  errors: NetworkErrorDetails[];
  /** The send's `biz_opaque_callback_data`, echoed by the network: which send, and which attempt of it. */
  callbackData?: string;
}

export type NetworkEvent = InboundMessageEvent | StatusEvent;

/** Identifies an event across redeliveries of the same webhook (the network delivers at least once). */
export function networkEventKey(e: NetworkEvent): string {
  return e.kind === 'message' ? `m:${e.networkMessageId}` : `s:${e.networkMessageId}:${e.status}`;
}

export interface ParsedWebhook {
  events: NetworkEvent[];
  /** Parts of the payload that were not understood (logged, never fatal: the rest still counts). */
  skipped: string[];
}

const unixToIso = (ts: string): string => {
  const n = Number(ts);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000).toISOString() : new Date().toISOString();
};

export function errorDetailsFrom(e: GraphWebhookError): NetworkErrorDetails {
  return {
    code: e.code,
    title: e.title ?? graphErrorTitle(e.code) ?? 'Error',
    message: e.error_data?.details ?? e.message ?? e.title ?? '',
  };
}

const STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);

/**
 * Turns a (verified) webhook body into events. Rejects a body that is not the
 * `whatsapp_business_account` envelope; inside it, changes of other fields and
 * items of unknown shape are skipped and named in `skipped`.
 */
export function parseWebhook(body: unknown): { ok: true; value: ParsedWebhook } | { ok: false; reason: string } {
  const env = webhookEnvelopeSchema.safeParse(body);
  if (!env.success) return { ok: false, reason: 'not a whatsapp_business_account webhook envelope' };
  const events: NetworkEvent[] = [];
  const skipped: string[] = [];
  env.data.entry.forEach((entry, i) => {
    entry.changes.forEach((change, j) => {
      const where = `entry[${i}].changes[${j}]`;
      if (change.field !== 'messages') {
        skipped.push(`${where}: field ${change.field}`);
        return;
      }
      const value = webhookValueSchema.safeParse(change.value);
      if (!value.success) {
        skipped.push(`${where}: unexpected value shape`);
        return;
      }
      const v = value.data;
      const phoneNumberId = v.metadata.phone_number_id;
      const contacts = v.contacts ?? [];
      (v.messages ?? []).forEach((raw, k) => {
        const read = messageOf(raw);
        if (read === null) {
          skipped.push(`${where}.messages[${k}]: no sender, id or timestamp`);
          return;
        }
        const { m, content } = read;
        // The contacts entry of this sender: by BSUID, by phone, or the only one (system messages have none).
        const card =
          contacts.find((c) => m.from_user_id !== undefined && c.user_id === m.from_user_id) ??
          contacts.find((c) => m.from !== undefined && c.wa_id === m.from) ??
          (contacts.length === 1 ? contacts[0] : undefined);
        const customer: CustomerIdentity = {};
        const phone = m.from ?? card?.wa_id;
        if (phone !== undefined && PHONE_DIGITS_PATTERN.test(phone)) customer.phone = phone;
        const change = identityChangeOf(m);
        // A system message names the person by who they were: the BSUID before the change, when no other is given.
        const userId = m.from_user_id ?? card?.user_id ?? change?.previousUserId;
        if (userId !== undefined && isBusinessScopedUserId(userId)) customer.userId = userId;
        const parent = m.from_parent_user_id ?? card?.parent_user_id;
        if (parent !== undefined && parent !== '') customer.parentUserId = parent;
        if (card?.profile?.username) customer.username = card.profile.username;
        // The number a customer shares in answer to a contact-information request is their own: it joins who they are.
        const shared = sharedPhoneOf(raw);
        if (customer.phone === undefined && shared !== null) customer.phone = shared;
        if (customer.phone === undefined && customer.userId === undefined) {
          skipped.push(`${where}.messages[${k}]: no sender (neither a phone number nor a business-scoped user id)`);
          return;
        }
        const ev: InboundMessageEvent = {
          kind: 'message',
          businessAccountId: entry.id,
          phoneNumberId,
          customer,
          networkMessageId: m.id,
          at: unixToIso(m.timestamp),
          content,
        };
        if (customer.phone !== undefined) ev.from = customer.phone;
        const name = card?.profile?.name;
        if (name) ev.profileName = name;
        if (m.context?.id) ev.replyTo = m.context.id;
        if (change !== null) ev.identityChange = change;
        events.push(ev);
      });
      for (const raw of v.statuses ?? []) {
        const parsedStatus = webhookStatusSchema.safeParse(raw);
        if (!parsedStatus.success) {
          skipped.push(`${where}: unexpected status shape`);
          continue;
        }
        const s = parsedStatus.data;
        if (!STATUSES.has(s.status)) {
          skipped.push(`${where}: status ${s.status}`);
          continue;
        }
        const ev: StatusEvent = {
          kind: 'status',
          businessAccountId: entry.id,
          phoneNumberId,
          networkMessageId: s.id,
          status: s.status as StatusEvent['status'],
          at: unixToIso(s.timestamp),
          errors: (s.errors ?? []).map(errorDetailsFrom),
        };
        if (s.recipient_id) ev.recipientId = s.recipient_id;
        if (s.recipient_user_id && isBusinessScopedUserId(s.recipient_user_id)) ev.recipientUserId = s.recipient_user_id;
        if (s.biz_opaque_callback_data !== undefined) ev.callbackData = s.biz_opaque_callback_data;
        events.push(ev);
      }
    });
  });
  return { ok: true, value: { events, skipped } };
}

function withUserIds(c: IdentityChange, system: NonNullable<GraphWebhookMessage['system']>): IdentityChange {
  if (system.user_id !== undefined && isBusinessScopedUserId(system.user_id)) c.userId = system.user_id;
  if (system.previous_user_id !== undefined && isBusinessScopedUserId(system.previous_user_id)) c.previousUserId = system.previous_user_id;
  return c;
}

/**
 * The number in a `contacts` message the customer sent in answer to a
 * contact-information request (`origin: contact_request`, on the message or
 * on the card: Meta's pages have shown both), or null.
 */
function sharedPhoneOf(raw: unknown): string | null {
  const m = raw as { type?: unknown; origin?: unknown; contacts?: unknown };
  if (m.type !== 'contacts' || !Array.isArray(m.contacts)) return null;
  for (const card of m.contacts as { origin?: unknown; phones?: { phone?: unknown; wa_id?: unknown }[] }[]) {
    if (m.origin !== 'contact_request' && card?.origin !== 'contact_request') continue;
    for (const p of Array.isArray(card.phones) ? card.phones : []) {
      const digits = typeof p?.wa_id === 'string' ? p.wa_id : typeof p?.phone === 'string' ? p.phone.replace(/[^0-9]/g, '') : '';
      if (PHONE_DIGITS_PATTERN.test(digits)) return digits;
    }
  }
  return null;
}

/** What a system message says changed about the customer; null for any other message. */
function identityChangeOf(m: Pick<GraphWebhookMessage, 'type' | 'system'>): IdentityChange | null {
  if (m.type !== 'system' || m.system === undefined) return null;
  const t = m.system.type;
  if (t === 'user_changed_number' || t === 'customer_changed_number') {
    const phone = m.system.wa_id;
    const c: IdentityChange = { kind: 'user_changed_number' };
    if (phone !== undefined && PHONE_DIGITS_PATTERN.test(phone)) c.phone = phone;
    return withUserIds(c, m.system);
  }
  if (t === 'user_changed_user_id') return withUserIds({ kind: 'user_changed_user_id' }, m.system);
  return null;
}

/**
 * A message of the webhook, read on its own. One whose type-specific part is
 * not the shape expected (a field the network changed) is still the
 * customer's message: it is kept as `unsupported` with what came. Only one
 * without an id or timestamp cannot be placed and is skipped (and one
 * without a sender, by the caller).
 */
function messageOf(raw: unknown): { m: Pick<GraphWebhookMessage, 'from' | 'from_user_id' | 'from_parent_user_id' | 'id' | 'timestamp' | 'context' | 'type' | 'system'>; content: MessageContent } | null {
  const m = webhookMessageSchema.safeParse(raw);
  if (m.success) return { m: m.data, content: contentOf(m.data) };
  const head = webhookMessageSchema.pick({ from: true, from_user_id: true, from_parent_user_id: true, id: true, timestamp: true }).safeParse(raw);
  if (!head.success) return null;
  const type = (raw as { type?: unknown }).type;
  return { m: { ...head.data, type: typeof type === 'string' ? type : 'unknown' }, content: { type: 'unsupported', originalType: typeof type === 'string' ? type : 'unknown', raw: raw as Record<string, unknown> } };
}

function contentOf(m: GraphWebhookMessage): MessageContent {
  const c = knownContentOf(m);
  const product = m.context?.referred_product;
  if (product) c.referredProduct = { catalogId: product.catalog_id, productRetailerId: product.product_retailer_id };
  // A click-to-WhatsApp ad's customer: the ad comes along with the first message, whatever its type.
  const referral = (m as { referral?: unknown }).referral;
  if (referral !== null && typeof referral === 'object' && !Array.isArray(referral)) c.referral = referral as Record<string, unknown>;
  return c;
}

/** Kept whole when the service has no model for it: a type the network adds later loses nothing. */
function unsupported(m: GraphWebhookMessage, originalType: string, text?: string): MessageContent {
  const c: MessageContent = { type: 'unsupported', originalType, raw: m as Record<string, unknown> };
  if (text !== undefined && text !== '') c.text = text;
  return c;
}

function knownContentOf(m: GraphWebhookMessage): MessageContent {
  const raw = m as Record<string, unknown>;
  switch (m.type) {
    case 'text':
      return { type: 'text', text: m.text?.body ?? '' };
    case 'interactive': {
      const list = m.interactive?.list_reply;
      if (list) return list.description ? { type: 'button_reply', text: list.title, buttonId: list.id, description: list.description } : { type: 'button_reply', text: list.title, buttonId: list.id };
      const reply = m.interactive?.button_reply;
      if (reply) return { type: 'button_reply', text: reply.title, buttonId: reply.id };
      return unsupported(m, `interactive/${m.interactive?.type ?? '?'}`);
    }
    case 'button': {
      const c: MessageContent = { type: 'button_reply', text: m.button?.text ?? m.button?.payload ?? '' };
      if (m.button?.payload !== undefined) c.payload = m.button.payload;
      return c;
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker': {
      const media = m[m.type];
      const c: MessageContent = { type: m.type };
      if (media?.id) c.mediaId = media.id;
      if (media?.link) c.mediaUrl = media.link;
      if (media?.mime_type) c.mimeType = media.mime_type;
      if (media?.caption) {
        c.caption = media.caption;
        c.text = media.caption;
      }
      if (media?.filename) c.filename = media.filename;
      return c;
    }
    case 'location': {
      if (!m.location) return unsupported(m, 'location');
      const loc: NonNullable<MessageContent['location']> = { latitude: m.location.latitude, longitude: m.location.longitude };
      if (m.location.name) loc.name = m.location.name;
      if (m.location.address) loc.address = m.location.address;
      if (m.location.url) loc.url = m.location.url;
      const text = [loc.name, loc.address].filter(Boolean).join(', ');
      return text ? { type: 'location', location: loc, text } : { type: 'location', location: loc };
    }
    case 'contacts': {
      const cards = Array.isArray(raw.contacts) ? (raw.contacts as unknown[]).filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x)) : [];
      if (cards.length === 0) return unsupported(m, 'contacts');
      const names = cards.map((card) => (card.name as { formatted_name?: unknown } | undefined)?.formatted_name).filter((n): n is string => typeof n === 'string' && n !== '');
      return { type: 'contacts', contacts: cards, text: names.join(', ') };
    }
    case 'reaction': {
      const r = raw.reaction as { message_id?: unknown; emoji?: unknown } | undefined;
      if (typeof r?.message_id !== 'string') return unsupported(m, 'reaction');
      const emoji = typeof r.emoji === 'string' ? r.emoji : '';
      return { type: 'reaction', reaction: { messageId: r.message_id, emoji }, text: emoji };
    }
    case 'order': {
      const items = (raw.order as { product_items?: unknown[] } | undefined)?.product_items;
      return unsupported(m, 'order', Array.isArray(items) ? `Order: ${items.length} item${items.length === 1 ? '' : 's'}` : 'Order');
    }
    case 'system':
      return unsupported(m, 'system', typeof (raw.system as { body?: unknown } | undefined)?.body === 'string' ? (raw.system as { body: string }).body : undefined);
    default:
      return unsupported(m, m.type);
  }
}
