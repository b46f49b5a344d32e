import { jsonTooDeep } from '../json-depth.js';
import { storableCopy } from '../storable-text.js';
import { AppError } from '../errors.js';
import { safeEqual } from '../domain/secrets.js';
import type { Logger } from '../log.js';
import type { ChannelRepo, WhatsAppChannel } from '../store/channels/port.js';
import type { SessionMessageRepo } from '../store/session-messages/port.js';
import { parseWebhook, type NetworkEvent } from '../network/inbound.js';
import { verifyHubSignature } from '../network/signature.js';
import type { ConversationGateway } from './service.js';
import type { ContactRepo } from '../store/core/port.js';

export interface NetworkWebhookReceiverDeps {
  channels: ChannelRepo;
  messages: SessionMessageRepo;
  /** Who a customer is: the ids the network shows for them lead to one contact. */
  contacts: Pick<ContactRepo, 'identify' | 'resolve' | 'get' | 'merge'>;
  conversations: ConversationGateway;
  log: Logger;
}

export interface ReceiveResult {
  received: number;
  applied: number;
  duplicates: number;
  skipped: string[];
}

/**
 * The chat network's webhook receiver, one URL per channel
 * (`/webhooks/whatsapp/{channelId}`).
 *
 * - `verify` answers Meta's subscription check (`hub.mode=subscribe`,
 *   `hub.verify_token`, `hub.challenge`).
 * - `receive` checks `X-Hub-Signature-256` over the raw body with the
 *   channel's app secret before reading anything (401, nothing processed,
 *   when it does not match), then routes every message and status to the
 *   contact's conversation actor. A customer is placed by every id the
 *   webhook shows for them (their phone and their business-scoped user id):
 *   ids seen together are linked to one contact once, on any node, so a
 *   later message with either reaches the same conversation. It resolves only after each actor has
 *   recorded its event durably, so the 200 that follows means "safe": a crash
 *   before it makes the network deliver again. Redeliveries are recognised by
 *   the network's ids and change nothing.
 */
export class NetworkWebhookReceiver {
  constructor(private readonly d: NetworkWebhookReceiverDeps) {}

  async verify(channelId: string, query: Record<string, unknown>): Promise<string> {
    const channel = await this.d.channels.getGlobal(channelId);
    const mode = query['hub.mode'];
    const token = query['hub.verify_token'];
    const challenge = query['hub.challenge'];
    if (channel === null || channel.kind !== 'whatsapp_cloud' || mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string' || challenge === '') {
      throw new AppError(403, 'verification_failed', 'webhook verification failed');
    }
    if (!safeEqual(token, channel.credentials.verifyToken)) throw new AppError(403, 'verification_failed', 'webhook verification failed');
    return challenge;
  }

  async receive(channelId: string, rawBody: Buffer | undefined, signature: string | undefined): Promise<ReceiveResult> {
    const channel = await this.d.channels.getGlobal(channelId);
    // Same answer for an unknown channel and a bad signature: nothing to learn by probing.
    if (channel === null || channel.kind !== 'whatsapp_cloud' || rawBody === undefined || !verifyHubSignature(channel.credentials.appSecret, rawBody, signature)) {
      throw new AppError(401, 'invalid_signature', 'missing or invalid X-Hub-Signature-256');
    }
    let body: unknown;
    if (jsonTooDeep(rawBody)) throw new AppError(400, 'json_too_deep', 'the webhook body nests too deep');
    try {
      // A customer's text the stores cannot keep is kept readable instead of refused: refusing would lose the message.
      body = storableCopy(JSON.parse(rawBody.toString('utf8')));
    } catch {
      throw new AppError(400, 'invalid_json', 'the webhook body is not valid JSON');
    }
    const parsed = parseWebhook(body);
    if (!parsed.ok) {
      // Signed by the network but not a shape we know: acknowledge, or it would be redelivered for days.
      this.d.log.warn('network webhook not understood', { channelId, reason: parsed.reason });
      return { received: 0, applied: 0, duplicates: 0, skipped: [parsed.reason] };
    }
    const skipped = [...parsed.value.skipped];
    const groups = new Map<string, { channel: WhatsAppChannel; events: { ev: NetworkEvent; messageRecordId?: string }[] }>();
    for (const ev of parsed.value.events) {
      const target = await this.channelFor(channel, ev.phoneNumberId);
      if (target === null) {
        skipped.push(`${ev.kind} ${ev.networkMessageId}: phone number ${ev.phoneNumberId} is not a channel of this app`);
        continue;
      }
      const found = await this.audienceOf(target, ev);
      if (found === null) {
        skipped.push(`status ${ev.networkMessageId}: no recipient and no such message`);
        continue;
      }
      const g = groups.get(found.aeid) ?? { channel: target, events: [] };
      g.events.push({ ev, messageRecordId: found.messageRecordId });
      groups.set(found.aeid, g);
    }
    let applied = 0;
    let duplicates = 0;
    // One contact's events in order; different contacts side by side.
    const results = await Promise.allSettled(
      [...groups].map(async ([aeid, g]) => {
        // No idempotency key of our own: the handlers recognise a redelivery by
        // the network's ids and the stored state, and say so in their reply.
        for (const { ev, messageRecordId } of g.events) {
          if (ev.kind === 'message') {
            const r = await this.d.conversations.ask(g.channel.organizationId, aeid, { kind: 'network.inbound', channelId: g.channel.id, event: ev });
            if (r.duplicate) duplicates++;
            else applied++;
          } else {
            // The stored message found here goes along, so the actor reads it once instead of looking it up again.
            const r = await this.d.conversations.ask(g.channel.organizationId, aeid, { kind: 'network.status', channelId: g.channel.id, event: ev, ...(messageRecordId === undefined ? {} : { messageRecordId }) });
            if (r.applied) applied++;
            else duplicates++;
          }
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      this.d.log.warn('network webhook not fully recorded; the network will redeliver', { channelId, err: failed.reason });
      throw new AppError(503, 'not_recorded', 'the events could not all be recorded; deliver again', undefined, { retryAfterSeconds: 5 });
    }
    if (skipped.length > 0) this.d.log.info('network webhook parts skipped', { channelId, skipped });
    return { received: parsed.value.events.length, applied, duplicates, skipped };
  }

  /**
   * The channel an event belongs to: the receiving channel, or another
   * channel of the same organization and the same Meta app (same app
   * secret), since one app's webhooks all go to one callback URL.
   */
  private async channelFor(receiving: WhatsAppChannel, phoneNumberId: string): Promise<WhatsAppChannel | null> {
    if (phoneNumberId === receiving.phoneNumberId) return receiving;
    const other = await this.d.channels.getByPhoneNumberId(phoneNumberId);
    if (other === null || other.organizationId !== receiving.organizationId) return null;
    return safeEqual(other.credentials.appSecret, receiving.credentials.appSecret) ? other : null;
  }

  /**
   * A webhook named two contacts that exist as one person: `loser` joins
   * `winner` (the phone's, the spec's form). In this order, each step once by
   * its key, so a crash in between is finished by the network's redelivery:
   * the loser's conversation leaves the lists (its actor takes no new
   * message after step 3), the winner's gets a `contact_merged` entry and
   * the `contact.merged` event, and then every id of the loser is linked to
   * the winner. No message moves: the loser's history stays where it was
   * written and is read as the winner's.
   */
  private async merge(org: string, winner: string, loser: string): Promise<void> {
    if (winner === loser) return;
    const key = `contact.merge:${loser}>${winner}`;
    const lost = await this.d.contacts.get(org, loser);
    await this.d.conversations.ask(org, loser, { kind: 'contact.merged_away', into: winner }, key);
    await this.d.conversations.ask(org, winner, { kind: 'contact.merged_in', from: loser, fromContactId: lost?.audienceExternalId === loser ? lost.id : null }, key);
    if (await this.d.contacts.merge(org, winner, loser)) this.d.log.info('two contacts found to be one person were merged', { organizationId: org, winner, loser });
  }

  private async audienceOf(channel: WhatsAppChannel, ev: NetworkEvent): Promise<{ aeid: string; messageRecordId?: string } | null> {
    const org = channel.organizationId;
    const pn = channel.phoneNumberId;
    if (ev.kind === 'message') {
      const c = ev.customer;
      // Phone first: a person known by phone keeps the spec's `<phone>:<phone number id>` form.
      const ids = [c.phone, c.userId, ev.identityChange?.phone, ev.identityChange?.userId]
        .filter((x): x is string => x !== undefined)
        .map((x) => `${x}:${pn}`)
        .filter((x, i, all) => all.indexOf(x) === i);
      const placed = await this.d.contacts.identify(org, ids);
      for (const id of placed.conflicting) await this.merge(org, placed.canonical, await this.d.contacts.resolve(org, id));
      return { aeid: placed.canonical };
    }
    // The message names its contact exactly; the recipient's ids are the fallback (a send still being recorded).
    const m = await this.d.messages.locateByNetworkId(org, ev.networkMessageId);
    if (m !== null) return { aeid: m.audienceExternalId, messageRecordId: m._id };
    const to = ev.recipientId ?? ev.recipientUserId;
    return to === undefined ? null : { aeid: await this.d.contacts.resolve(org, `${to}:${pn}`) };
  }
}
