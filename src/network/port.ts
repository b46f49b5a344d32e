import type { NetworkErrorDetails } from '../domain/messages.js';
import type { GraphMessage, GraphTemplateDefinition } from './graph-api.js';

/** The credentials of one business phone number on the chat network. */
export interface NetworkAccount {
  phoneNumberId: string;
  businessAccountId: string;
  accessToken: string;
  /** The Graph API version this number's requests name (the channel's `graphApiVersion`); unset: the adapter's default. */
  graphApiVersion?: string;
}

/** A WhatsApp channel's account on the network: its number, business account, token and Graph API version. */
export function networkAccountOf(c: { phoneNumberId: string; businessAccountId: string; credentials: { accessToken: string }; graphApiVersion?: string }): NetworkAccount {
  const a: NetworkAccount = { phoneNumberId: c.phoneNumberId, businessAccountId: c.businessAccountId, accessToken: c.credentials.accessToken };
  if (c.graphApiVersion !== undefined) a.graphApiVersion = c.graphApiVersion;
  return a;
}

/** The network refused the request; nothing was sent. */
export interface NetworkRejection extends NetworkErrorDetails {
  httpStatus: number;
  fbtraceId?: string;
}

export type SendOutcome =
  /** `waId`, `userId`: who the network says received it (its phone, its business-scoped user id), when it says. */
  | { ok: true; messageId: string; waId?: string; userId?: string }
  | { ok: false; rejection: NetworkRejection };

/**
 * The network did not answer (connection refused, timeout, a non-Graph error
 * page). Whether the message left is unknown only when `maybeSent` is true
 * (the request may have reached the network before the answer was lost).
 */
export class NetworkUnavailableError extends Error {
  constructor(
    message: string,
    readonly maybeSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NetworkUnavailableError';
  }
}

/**
 * The chat network (WhatsApp Cloud API) as this service uses it. The real
 * adapter talks HTTP to the Graph API or to the sandbox network that
 * simulates it; both sides speak the wire shapes of `graph-api.ts`.
 *
 * `send` resolves with the network's message id once the network accepted
 * the message (accepted, not delivered: delivery is reported later by status
 * webhooks), or with the network's rejection. It throws
 * `NetworkUnavailableError` when no answer came back.
 */
export interface ChatNetwork {
  /** `callbackData` goes as `biz_opaque_callback_data`: the network echoes it in the message's status webhooks. */
  send(account: NetworkAccount, to: string, message: GraphMessage, callbackData?: string): Promise<SendOutcome>;
  /** Every template of the business account (all pages). */
  listTemplates(account: Pick<NetworkAccount, 'businessAccountId' | 'accessToken' | 'graphApiVersion'>): Promise<GraphTemplateDefinition[]>;
  /**
   * A media file a customer sent, by the id their message carried. Throws
   * `NetworkRejectedError` (unknown id, wrong token), `MediaTooLargeError`
   * past `maxBytes`, `NetworkUnavailableError` when no usable answer came.
   */
  downloadMedia(account: Pick<NetworkAccount, 'accessToken' | 'graphApiVersion'>, mediaId: string, maxBytes: number): Promise<NetworkMedia>;
}

/** A media file as the network serves it. */
export interface NetworkMedia {
  mimeType: string;
  bytes: Buffer;
}

/** The file is larger than the caller will hold in memory. */
export class MediaTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the media file is larger than ${maxBytes} bytes`);
    this.name = 'MediaTooLargeError';
  }
}

/** A non-send request (template sync) the network refused. */
export class NetworkRejectedError extends Error {
  constructor(readonly rejection: NetworkRejection) {
    super(`chat network refused the request: (#${rejection.code}) ${rejection.message}`);
    this.name = 'NetworkRejectedError';
  }
}
