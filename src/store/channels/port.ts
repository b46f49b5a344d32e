import { AppError } from '../../errors.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';
import type { ChannelRouting } from '../../domain/routing.js';

export const CHANNEL_KINDS = ['whatsapp_cloud', 'web_chat'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** Which Graph API a WhatsApp channel talks to: Meta's, or the sandbox network served by this service. */
export type ChannelNetwork = 'graph' | 'sandbox';

interface ChannelBase {
  /** `ch_…`, unique across organizations. What the dashboard's Channels page shows as channelId. */
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  /** Who answers first, bot fallback, auto-assignment, business hours. Absent: `DEFAULT_ROUTING`. */
  routing?: ChannelRouting;
}

export interface WhatsAppCredentials {
  accessToken: string;
  /** Keys the `X-Hub-Signature-256` of the network's webhooks. */
  appSecret: string;
  /** Echoed by the network in the `hub.verify_token` of the webhook verification request. */
  verifyToken: string;
}

/** A WhatsApp Business (Cloud API) phone number. */
export interface WhatsAppChannel extends ChannelBase {
  kind: 'whatsapp_cloud';
  network: ChannelNetwork;
  phoneNumberId: string;
  businessAccountId: string;
  displayPhoneNumber: string | null;
  credentials: WhatsAppCredentials;
  /**
   * The number's throughput tier: messages per second the network accepts
   * from it. Sends above it are paced, not refused. Absent: the Cloud API's
   * default tier (`DEFAULT_MESSAGES_PER_SECOND`).
   */
  messagesPerSecond?: number;
  /** The Graph API version this number's requests name; absent: the deployment's default. */
  graphApiVersion?: string;
}

/** The Cloud API's default throughput per business phone number (its highest tier is 1,000). */
export const DEFAULT_MESSAGES_PER_SECOND = 80;

/** The tier a send on this channel is paced to. */
export const messagesPerSecondOf = (c: WhatsAppChannel): number => c.messagesPerSecond ?? DEFAULT_MESSAGES_PER_SECOND;

/** How the widget looks and greets, set from the channel's settings. */
export interface WidgetSettings {
  /** The launcher's and the visitor's bubbles' colour, `#rrggbb`. */
  color?: string;
  /** The panel's title. */
  title?: string;
  /** The first line a visitor sees, before anyone wrote. */
  greeting?: string;
  position?: 'right' | 'left';
  /** Ask a new visitor's name and email before the first message. */
  preChatForm?: boolean;
}

/** A chat widget on the business's site: a channel, but not on the chat network. */
export interface WebChatChannel extends ChannelBase {
  kind: 'web_chat';
  /** The pages (origins) the widget may talk from; every visitor request and socket is checked against them. */
  allowedOrigins: string[];
  /**
   * Keys the HMAC a business site sends with a signed-in user's id (identity
   * verification). Sealed when stored. Absent on a channel made without a
   * secrets key: identity verification is then refused until one is rotated in.
   */
  identitySecret?: string;
  widget?: WidgetSettings;
}

export type Channel = WhatsAppChannel | WebChatChannel;

/** A channel as stored: the WhatsApp credentials sealed, bound to the channel id. */
export type StoredChannel =
  | (Omit<WhatsAppChannel, 'credentials'> & { credentials: Record<keyof WhatsAppCredentials, SealedSecret> })
  | (Omit<WebChatChannel, 'identitySecret'> & { identitySecret?: SealedSecret });

/** Without a key (clustered mode with no SECRETS_KEY) chat-network credentials can be neither stored nor read. */
function need(box: SecretBox | null): SecretBox {
  if (box === null) {
    throw new AppError(503, 'secrets_key_missing', 'SECRETS_KEY is not set: chat-network channel credentials cannot be stored or read (set the same 32-byte key, hex or base64, on every node)');
  }
  return box;
}

export function sealChannel(c: Channel, maybeBox: SecretBox | null): StoredChannel {
  if (c.kind !== 'whatsapp_cloud') {
    const { identitySecret, ...rest } = c;
    if (identitySecret === undefined) return rest;
    return { ...rest, identitySecret: need(maybeBox).seal(identitySecret, `channel:${c.id}:identitySecret`) };
  }
  const box = need(maybeBox);
  const aad = (field: string) => `channel:${c.id}:${field}`;
  return {
    ...c,
    credentials: {
      accessToken: box.seal(c.credentials.accessToken, aad('accessToken')),
      appSecret: box.seal(c.credentials.appSecret, aad('appSecret')),
      verifyToken: box.seal(c.credentials.verifyToken, aad('verifyToken')),
    },
  };
}

export function openChannel(s: StoredChannel, maybeBox: SecretBox | null): Channel {
  if (s.kind !== 'whatsapp_cloud') {
    const { identitySecret, ...rest } = s;
    // Without the key the channel still serves anonymous visitors; identity verification is refused.
    if (identitySecret === undefined || maybeBox === null) return rest;
    return { ...rest, identitySecret: maybeBox.open(identitySecret, `channel:${s.id}:identitySecret`) };
  }
  const box = need(maybeBox);
  const aad = (field: string) => `channel:${s.id}:${field}`;
  return {
    ...s,
    credentials: {
      accessToken: box.open(s.credentials.accessToken, aad('accessToken')),
      appSecret: box.open(s.credentials.appSecret, aad('appSecret')),
      verifyToken: box.open(s.credentials.verifyToken, aad('verifyToken')),
    },
  };
}

/**
 * The channels of every organization. Secrets are sealed by the adapter
 * before they are stored and opened when read; callers see plain channels.
 * Methods taking an organization id never return another organization's
 * channel. `getGlobal` and `getByPhoneNumberId` are for the network webhook
 * receiver, which learns the organization from the channel.
 *
 * Reads (`get`, `getGlobal`, `getByPhoneNumberId`) see a change made through
 * the same repo at once; the Redis adapter may serve a change made on another
 * node up to a second late (every send and status webhook reads its channel,
 * so each node keeps a read for a second). A new channel is seen at once.
 */
export interface ChannelRepo {
  /** Fails with 409 `phone_number_in_use` when another channel has the phone number id. */
  create(channel: Channel): Promise<void>;
  get(organizationId: string, id: string): Promise<Channel | null>;
  getGlobal(id: string): Promise<Channel | null>;
  getByPhoneNumberId(phoneNumberId: string): Promise<WhatsAppChannel | null>;
  /** Oldest first. */
  list(organizationId: string): Promise<Channel[]>;
  /** Replaces the stored channel (same id, organization, kind and phone number id). */
  update(channel: Channel): Promise<void>;
  /** True when it existed. */
  delete(organizationId: string, id: string): Promise<boolean>;
}
