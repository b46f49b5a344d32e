import {
  errorEnvelopeSchema,
  graphErrorTitle,
  graphTemplateDefinitionSchema,
  mediaInfoResponseSchema,
  sendResponseSchema,
  templateListResponseSchema,
  type GraphMessage,
  type GraphSendRequest,
  type GraphTemplateDefinition,
} from './graph-api.js';
import {
  MediaTooLargeError,
  NetworkRejectedError,
  NetworkUnavailableError,
  type ChatNetwork,
  type NetworkAccount,
  type NetworkMedia,
  type NetworkRejection,
  type SendOutcome,
} from './port.js';
import { DEFAULT_GRAPH_API_VERSION, splitGraphBase } from './graph-versions.js';
import { isBusinessScopedUserId } from '../domain/contact-id.js';
import { createHttpClient, HttpExchangeError, type HttpAnswer, type HttpClient } from './http-client.js';

export interface GraphApiOptions {
  /**
   * The Graph API's host, `https://graph.facebook.com`; the version is
   * appended per request. A base that ends in a version
   * (`https://graph.facebook.com/v21.0`, the older form) names the default.
   */
  baseUrl: string | (() => string);
  /** The version for accounts that name none; unset: the base's own, else `DEFAULT_GRAPH_API_VERSION`. */
  version?: string;
  timeoutMs?: number;
  /** Defaults to a keep-alive node:http client of its own (`fetchHttpClient(fetch)` to go through a fetch). */
  http?: HttpClient;
}

const MAX_TEMPLATE_PAGES = 50;
/** Where the Cloud API serves media downloads (lookaside.fbsbx.com today). */
const MEDIA_HOSTS = /(^|\.)(fbsbx\.com|facebook\.com|whatsapp\.net)$/;

/**
 * The real chat-network adapter: the WhatsApp Cloud API over HTTP. Points at
 * graph.facebook.com in production and at the sandbox network in embedded
 * mode and tests, with the same code path.
 */
export class GraphApiNetwork implements ChatNetwork {
  private readonly http: HttpClient;
  private readonly timeoutMs: number;

  constructor(private readonly options: GraphApiOptions) {
    this.http = options.http ?? createHttpClient();
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** Closes idle connections. */
  close(): void {
    this.http.close();
  }

  /** The versioned base for this account: its own version, else the adapter's, else the base URL's, else the default. */
  private base(account?: Pick<NetworkAccount, 'graphApiVersion'>): string {
    const b = typeof this.options.baseUrl === 'function' ? this.options.baseUrl() : this.options.baseUrl;
    const { host, version } = splitGraphBase(b);
    return `${host}/${account?.graphApiVersion ?? this.options.version ?? version ?? DEFAULT_GRAPH_API_VERSION}`;
  }

  async send(account: NetworkAccount, to: string, message: GraphMessage, callbackData?: string): Promise<SendOutcome> {
    // A business-scoped user id goes in `recipient`, a phone number in `to` (Meta's rule when both are given: `to` wins).
    const body: GraphSendRequest = isBusinessScopedUserId(to)
      ? { messaging_product: 'whatsapp', recipient_type: 'individual', recipient: to, ...message }
      : { messaging_product: 'whatsapp', recipient_type: 'individual', to, ...message };
    if (callbackData !== undefined) body.biz_opaque_callback_data = callbackData;
    const url = `${this.base(account)}/${encodeURIComponent(account.phoneNumberId)}/messages`;
    const res = await this.request(url, account.accessToken, { method: 'POST', body: JSON.stringify(body) }, true);
    if (res.status >= 200 && res.status < 300) {
      const parsed = sendResponseSchema.safeParse(res.json);
      if (!parsed.success) {
        // Accepted (2xx) but unreadable: the message may well have left.
        throw new NetworkUnavailableError(`unexpected send response from the chat network (HTTP ${res.status})`, true);
      }
      const first = parsed.data.messages[0]!;
      const out: SendOutcome = { ok: true, messageId: first.id };
      const waId = parsed.data.contacts?.[0]?.wa_id;
      if (waId) out.waId = waId;
      const userId = parsed.data.contacts?.[0]?.user_id;
      if (userId) out.userId = userId;
      return out;
    }
    return { ok: false, rejection: rejectionFrom(res.status, res.json) };
  }

  async listTemplates(account: Pick<NetworkAccount, 'businessAccountId' | 'accessToken' | 'graphApiVersion'>): Promise<GraphTemplateDefinition[]> {
    const base = this.base(account);
    const origin = new URL(base).origin;
    let url: string | undefined =
      `${base}/${encodeURIComponent(account.businessAccountId)}/message_templates?limit=100` +
      '&fields=id,name,language,status,category,parameter_format,components';
    const out: GraphTemplateDefinition[] = [];
    for (let page = 0; url !== undefined && page < MAX_TEMPLATE_PAGES; page++) {
      const res = await this.request(url, account.accessToken, { method: 'GET' }, false);
      if (res.status < 200 || res.status >= 300) throw new NetworkRejectedError(rejectionFrom(res.status, res.json));
      const list = templateListResponseSchema.safeParse(res.json);
      if (!list.success) throw new NetworkUnavailableError('unexpected template list response from the chat network', false);
      for (const item of list.data.data) {
        const t = graphTemplateDefinitionSchema.safeParse(item);
        if (t.success) out.push(t.data);
      }
      const next = list.data.paging?.next;
      // Follow the cursor only on the same origin: the token must not leave for another host.
      url = next !== undefined && new URL(next, base).origin === origin ? new URL(next, base).toString() : undefined;
    }
    return out;
  }

  async downloadMedia(account: Pick<NetworkAccount, 'accessToken' | 'graphApiVersion'>, mediaId: string, maxBytes: number): Promise<NetworkMedia> {
    const res = await this.request(`${this.base(account)}/${encodeURIComponent(mediaId)}`, account.accessToken, { method: 'GET' }, false);
    if (res.status < 200 || res.status >= 300) throw new NetworkRejectedError(rejectionFrom(res.status, res.json));
    const info = mediaInfoResponseSchema.safeParse(res.json);
    if (!info.success) throw new NetworkUnavailableError('unexpected media response from the chat network', false);
    let url: URL;
    try {
      url = new URL(info.data.url);
    } catch {
      throw new NetworkUnavailableError('the chat network gave an unreadable media URL', false);
    }
    // The download needs the access token: send it only to the API's own origin or the network's media hosts.
    if (url.origin !== new URL(this.base(account)).origin && !(url.protocol === 'https:' && MEDIA_HOSTS.test(url.hostname))) {
      throw new NetworkUnavailableError(`the chat network gave a media URL on ${url.hostname}, where the access token must not go`, false);
    }
    let file: Response;
    try {
      file = await fetch(url, { headers: { authorization: `Bearer ${account.accessToken}` }, signal: AbortSignal.timeout(this.timeoutMs), redirect: 'error' });
    } catch (e) {
      throw new NetworkUnavailableError('the media download failed', false, { cause: e });
    }
    if (!file.ok || file.body === null) {
      await file.body?.cancel();
      throw new NetworkUnavailableError(`the media download answered HTTP ${file.status}`, false);
    }
    if (Number(file.headers.get('content-length') ?? 0) > maxBytes) {
      await file.body.cancel();
      throw new MediaTooLargeError(maxBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const reader = file.body.getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        size += r.value.byteLength;
        if (size > maxBytes) throw new MediaTooLargeError(maxBytes);
        chunks.push(Buffer.from(r.value));
      }
    } catch (e) {
      await reader.cancel().catch(() => undefined);
      if (e instanceof MediaTooLargeError) throw e;
      throw new NetworkUnavailableError('the media download broke off', false, { cause: e });
    }
    return { mimeType: file.headers.get('content-type') ?? info.data.mime_type, bytes: Buffer.concat(chunks) };
  }

  private async request(
    url: string,
    token: string,
    init: { method: string; body?: string },
    isSend: boolean,
  ): Promise<{ status: number; json: unknown }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    let res: HttpAnswer;
    try {
      res = await this.http.request(url, { method: init.method, headers, body: init.body, timeoutMs: this.timeoutMs });
    } catch (e) {
      if (!(e instanceof HttpExchangeError)) throw e;
      // Only a request that was completely sent may have been taken by the network; one that failed to connect cannot.
      const maybeSent = isSend && e.requestSent;
      const message =
        e.reason === 'timeout'
          ? `the chat network did not answer within ${this.timeoutMs} ms`
          : e.requestSent
            ? 'the chat network closed the connection before answering'
            : 'the chat network is unreachable';
      throw new NetworkUnavailableError(message, maybeSent, { cause: e });
    }
    let json: unknown = undefined;
    try {
      json = res.text === '' ? undefined : JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    if (res.status >= 500 && !errorEnvelopeSchema.safeParse(json).success) {
      throw new NetworkUnavailableError(`the chat network answered HTTP ${res.status}`, isSend);
    }
    return { status: res.status, json };
  }
}

function rejectionFrom(status: number, json: unknown): NetworkRejection {
  const env = errorEnvelopeSchema.safeParse(json);
  if (!env.success) {
    return { code: 0, title: 'Unexpected response', message: `the chat network answered HTTP ${status} without an error body`, httpStatus: status };
  }
  const e = env.data.error;
  const out: NetworkRejection = {
    code: e.code,
    title: e.error_user_title ?? graphErrorTitle(e.code) ?? e.type ?? 'Error',
    message: e.error_data?.details ?? e.error_user_msg ?? e.message,
    httpStatus: status,
  };
  if (e.fbtrace_id) out.fbtraceId = e.fbtrace_id;
  return out;
}
