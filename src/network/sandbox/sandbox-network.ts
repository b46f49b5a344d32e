import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RateLimiter } from '../../store/ratelimit/port.js';
import { CUSTOMER_SERVICE_WINDOW_MS } from '../../domain/service-window.js';
import { CUSTOMER_ADDRESS_PATTERN, PHONE_DIGITS_PATTERN } from '../../domain/contact-id.js';
import {
  graphError,
  graphTemplateDefinitionSchema,
  GRAPH_ERRORS,
  TEMPLATE_CATEGORIES,
  type GraphErrorEnvelope,
  type GraphWebhookMessage,
  type KnownGraphErrorCode,
} from '../graph-api.js';
import { aliveGraphVersions, graphVersionExpired, graphVersionInfo } from '../graph-versions.js';
import { sandboxCustomerKey, type SandboxCustomer } from './state.js';
import { signHubSignature } from '../signature.js';
import { createHttpClient, type HttpClient } from '../http-client.js';
import { checkTemplateComponents, renderTemplateMessage, shapeFromDefinition, templateStatusIssue } from '../template-rules.js';
import { parseSendRequest } from './validate.js';
import { SANDBOX_TEMPLATES } from './seed-templates.js';
import { SANDBOX_MEDIA_MAX_BYTES, type SandboxAccount, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';

/** An HTTP answer of the simulated Graph API. */
export interface GraphReply {
  status: number;
  body: unknown;
}

export interface SandboxNetworkOptions {
  state: SandboxState;
  /** Throughput limit per phone number (130429), shared by nodes in clustered mode. */
  limiter: RateLimiter;
  clock: Clock;
  log: Logger;
  /** Pause before each of the sent / delivered / read webhooks. */
  statusDelayMs: number;
  maxMessagesPerSecond: number;
  /** Base URL that callback URLs starting with `/` are relative to: this service. */
  webhookBaseUrl: () => string;
  /** Defaults to a keep-alive node:http client of its own. */
  http?: HttpClient;
  /** Waits before each redelivery of a webhook the receiver did not answer 200. */
  retryDelaysMs?: number[];
}

/** The customer's side of an action in the sandbox: the id of the message they sent, and whether the service took it. */
export interface CustomerActionResult {
  messageId: string;
  /** True when the service's webhook receiver answered 200 to the first delivery. */
  delivered: boolean;
}

/**
 * Numbers in the unassigned country code +999 are "not on WhatsApp": sends to
 * them are accepted and then fail with 131026, as the real network reports an
 * undeliverable message.
 */
export const SANDBOX_UNREACHABLE_PREFIX = '999';

export type CustomerMediaKind = 'image' | 'video' | 'audio' | 'document';
/** What the Cloud API accepts per media kind (the common types; stickers are not offered to the simulated customer). */
export const CUSTOMER_MEDIA_TYPES: Record<CustomerMediaKind, string[]> = {
  image: ['image/jpeg', 'image/png'],
  video: ['video/mp4', 'video/3gpp'],
  audio: ['audio/ogg', 'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/amr'],
  document: ['application/pdf', 'text/plain', 'application/msword', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/vnd.ms-excel', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.ms-powerpoint', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
};

const unix = (ms: number) => String(Math.floor(ms / 1000));
const wamid = () => 'wamid.' + randomBytes(24).toString('base64url');
const digits = (n: number) => String(randomInt(1, 10)) + Array.from({ length: n - 1 }, () => randomInt(0, 10)).join('');

/**
 * A faithful simulator of the WhatsApp Cloud API, served by the service
 * itself in embedded mode so every flow works on one machine.
 *
 * The business side is the Graph HTTP API (`send`, the template API), with
 * the network's validation and error codes. What follows an accepted send is
 * reported like the network does it: `sent`, `delivered`, `read` (or
 * `failed` with the error) as status webhooks signed with the account's app
 * secret, in the real envelope, posted to the account's callback URL and
 * redelivered when not answered 200. The customer side lets a person play
 * the customer: send a text, tap a reply button, tap a template quick reply;
 * each reaches the service as a real inbound webhook.
 */
export class SandboxNetwork {
  private closed = false;
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly tasks = new Set<Promise<unknown>>();
  private readonly http: HttpClient;
  private readonly retryDelays: number[];

  constructor(private readonly o: SandboxNetworkOptions) {
    this.http = o.http ?? createHttpClient();
    this.retryDelays = o.retryDelaysMs ?? [1_000, 5_000, 30_000, 120_000, 600_000];
  }

  // ------------------------------------------------------------------ accounts

  /** Registers a new business phone number (what signing up with Meta gives you), with the sample templates. */
  async provisionAccount(opts: { callbackUrl: string; displayPhoneNumber?: string; verifiedName?: string; businessAccountId?: string; seedTemplates?: boolean }): Promise<SandboxAccount> {
    const account: SandboxAccount = {
      phoneNumberId: digits(15),
      businessAccountId: opts.businessAccountId ?? digits(15),
      displayPhoneNumber: opts.displayPhoneNumber ?? `1555${digits(7)}`,
      verifiedName: opts.verifiedName ?? 'Sandbox Business',
      accessToken: 'EAASBX' + randomBytes(32).toString('base64url'),
      appSecret: randomBytes(16).toString('hex'),
      verifyToken: randomBytes(18).toString('base64url'),
      callbackUrl: opts.callbackUrl,
      createdAt: new Date(this.o.clock.now()).toISOString(),
    };
    await this.o.state.putAccount(account);
    if (opts.seedTemplates !== false && opts.businessAccountId === undefined) {
      for (const t of SANDBOX_TEMPLATES) await this.o.state.putTemplate(account.businessAccountId, { ...t, id: digits(16) });
    }
    return account;
  }

  getAccount(phoneNumberId: string): Promise<SandboxAccount | null> {
    return this.o.state.getAccount(phoneNumberId);
  }

  /**
   * Meta's check when a callback URL is configured: a GET with `hub.mode`,
   * `hub.verify_token` and `hub.challenge`; the receiver must echo the challenge.
   */
  async verifyCallback(phoneNumberId: string): Promise<boolean> {
    const a = await this.o.state.getAccount(phoneNumberId);
    if (a === null) return false;
    const challenge = randomBytes(8).toString('hex');
    const url = new URL(this.resolveCallback(a.callbackUrl));
    url.searchParams.set('hub.mode', 'subscribe');
    url.searchParams.set('hub.verify_token', a.verifyToken);
    url.searchParams.set('hub.challenge', challenge);
    try {
      const res = await this.http.request(url.toString(), { method: 'GET', headers: {}, timeoutMs: 20_000 });
      return res.status === 200 && res.text === challenge;
    } catch {
      return false;
    }
  }

  /**
   * The version that answers a request naming `version`: itself while Meta's
   * calendar has it alive, the oldest alive one once it expired, null for a
   * version Meta never released. (The release dates are not checked: the
   * sandbox may run on a clock set anywhere.)
   */
  servedGraphVersion(version: string): string | null {
    const now = new Date(this.o.clock.now());
    if (graphVersionInfo(version) === null) return null;
    return graphVersionExpired(version, now) ? (aliveGraphVersions(now)[0]?.version ?? version) : version;
  }

  // ------------------------------------------------------------------ Graph API: messages

  /** `POST /{phone-number-id}/messages` */
  async send(phoneNumberId: string, bearer: string | undefined, body: unknown): Promise<GraphReply> {
    const auth = await this.authorize(phoneNumberId, bearer);
    if ('status' in auth) return auth;
    const account = auth.account;
    const parsed = parseSendRequest(body);
    if (!parsed.ok) return graphError(parsed.code, parsed.details, trace());
    const limit = await this.o.limiter.hit(`sbx-mps:${phoneNumberId}`, this.o.maxMessagesPerSecond, 1000);
    if (!limit.allowed) return graphError(130429, `Cloud API message throughput (${this.o.maxMessagesPerSecond} messages per second) has been reached.`, trace());

    const msg = parsed.message;
    // By BSUID: the portfolio's user it names (unknown: nobody to deliver to); by number: that number's customer.
    const who = await this.customerOf(account, parsed.to);
    if (who === null) return graphError(100, `Invalid parameter: recipient (${parsed.to}) is not a WhatsApp user of this business`, trace());
    const record: SandboxMessage = {
      id: wamid(),
      phoneNumberId,
      customer: sandboxCustomerKey(who),
      recipient: { userId: who.userId, ...(parsed.byUserId === true || who.hidePhone || who.phone === undefined ? {} : { phone: who.phone }) },
      direction: 'to_customer',
      at: this.o.clock.now(),
      sent: msg,
      status: 'accepted',
    };
    if (parsed.callbackData !== undefined) record.callbackData = parsed.callbackData;
    let category = 'service';
    if (msg.type === 'template') {
      const t = await this.o.state.getTemplate(account.businessAccountId, msg.template.name, msg.template.language.code);
      if (t === null) {
        return graphError(132001, `template name (${msg.template.name}) does not exist in ${msg.template.language.code}`, trace());
      }
      if (parsed.byUserId === true && t.category.toUpperCase() === 'AUTHENTICATION') {
        return graphError(131062, 'Authentication templates need a phone number: send to the customer\'s phone number in to', trace());
      }
      const statusIssue = templateStatusIssue(t.status);
      if (statusIssue) return graphError(statusIssue.code, `${statusIssue.message}: ${t.name} (${t.language})`, trace());
      const shape = shapeFromDefinition(t.components);
      const issues = checkTemplateComponents(shape, msg.template.components);
      if (issues.length > 0) return graphError(issues[0]!.code, issues.map((i) => `${i.path}: ${i.message}`).join('; '), trace());
      category = t.category.toLowerCase();
      record.quickReplies = shape.buttons
        .filter((b) => b.type === 'QUICK_REPLY')
        .map((b) => {
          const given = msg.template.components?.find((c) => c.type === 'button' && Number(c.index) === b.index);
          const p = given?.parameters[0];
          return { index: b.index, text: b.text, payload: p?.type === 'payload' ? p.payload : b.text };
        });
      record.template = renderTemplateMessage(t.components, msg.template.components);
    } else if (msg.type === 'interactive' && msg.interactive.type === 'button') {
      record.buttons = msg.interactive.action.buttons.map((b) => ({ id: b.reply.id, title: b.reply.title }));
    } else if (msg.type === 'interactive' && msg.interactive.type === 'request_contact_info') {
      record.requestsContactInfo = true;
    }
    await this.o.state.putMessage(record);

    let failure: { code: KnownGraphErrorCode; details: string } | null = null;
    if (record.customer.startsWith(SANDBOX_UNREACHABLE_PREFIX)) {
      failure = { code: 131026, details: 'Message Undeliverable: the recipient is not a WhatsApp user.' };
    } else if (msg.type !== 'template') {
      const last = await this.o.state.lastInbound(phoneNumberId, record.customer);
      if (last === null || record.at - last >= CUSTOMER_SERVICE_WINDOW_MS) {
        failure = { code: 131047, details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' };
      }
    }
    this.track(this.reportStatuses(account, record, category, failure));

    const reply: Record<string, unknown> = {
      messaging_product: 'whatsapp',
      contacts: [parsed.byUserId === true ? { input: parsed.input, user_id: who.userId } : { input: parsed.input, wa_id: parsed.to }],
      messages: [msg.type === 'template' ? { id: record.id, message_status: 'accepted' } : { id: record.id }],
    };
    return { status: 200, body: reply };
  }

  private async reportStatuses(account: SandboxAccount, record: SandboxMessage, category: string, failure: { code: KnownGraphErrorCode; details: string } | null): Promise<void> {
    const steps: ('sent' | 'delivered' | 'read' | 'failed')[] = failure ? ['failed'] : ['sent', 'delivered', 'read'];
    for (const status of steps) {
      if (!(await this.sleep(this.o.statusDelayMs))) return;
      const at = this.o.clock.now();
      // The phone goes back only when the business may see it (sent to it, and not hidden); the BSUID always.
      const s: Record<string, unknown> = { id: record.id, status, timestamp: unix(at) };
      const phone = record.recipient === undefined ? record.customer : record.recipient.phone;
      if (phone !== undefined) s.recipient_id = phone;
      if (record.recipient !== undefined) s.recipient_user_id = record.recipient.userId;
      if (record.callbackData !== undefined) s.biz_opaque_callback_data = record.callbackData;
      if (status === 'failed' && failure) {
        const title = GRAPH_ERRORS[failure.code].title;
        s.errors = [{ code: failure.code, title, message: title, error_data: { details: failure.details }, href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/' }];
      } else if (status !== 'read') {
        s.conversation = { id: record.customer + record.phoneNumberId.slice(-6), origin: { type: category } };
        s.pricing = { billable: true, pricing_model: 'PMP', category };
      }
      await this.o.state.updateMessage({ ...record, status });
      await this.deliver(account, { statuses: [s] });
    }
  }

  // ------------------------------------------------------------------ Graph API: phone numbers

  /** `GET /{waba-id}/phone_numbers`: the business account's numbers, for a token of one of them. */
  async listPhoneNumbers(businessAccountId: string, bearer: string | undefined): Promise<GraphReply> {
    const auth = await this.authorizeBusiness(businessAccountId, bearer);
    if (auth) return auth;
    const data = (await this.o.state.accountsOfBusiness(businessAccountId)).map((a) => ({ ...phoneNumberView(a), status: 'LINKED' }));
    const cursor = (id: string | undefined) => Buffer.from(id ?? '').toString('base64url');
    return { status: 200, body: { data, paging: { cursors: { before: cursor(data[0]?.id), after: cursor(data.at(-1)?.id) } } } };
  }

  // ------------------------------------------------------------------ Graph API: templates

  /** `GET /{waba-id}/message_templates` with `limit`, `after`, and the name / status / language / category filters. */
  async listTemplates(businessAccountId: string, bearer: string | undefined, query: Record<string, unknown>): Promise<GraphReply> {
    const auth = await this.authorizeBusiness(businessAccountId, bearer);
    if (auth) return auth;
    const str = (k: string) => (typeof query[k] === 'string' ? (query[k] as string) : undefined);
    let all = await this.o.state.listTemplates(businessAccountId);
    const name = str('name');
    const status = str('status');
    const language = str('language');
    const category = str('category');
    if (name) all = all.filter((t) => t.name.includes(name));
    if (status) all = all.filter((t) => status.split(',').includes(t.status));
    if (language) all = all.filter((t) => t.language === language);
    if (category) all = all.filter((t) => category.toUpperCase().split(',').includes(t.category));
    const limit = Math.min(Math.max(Number(str('limit') ?? 25) || 25, 1), 100);
    const after = str('after');
    const start = after ? Number(Buffer.from(after, 'base64url').toString()) || 0 : 0;
    const page = all.slice(start, start + limit);
    const body: Record<string, unknown> = { data: page };
    if (page.length > 0) {
      const cursors = { before: Buffer.from(String(start)).toString('base64url'), after: Buffer.from(String(start + page.length)).toString('base64url') };
      const paging: Record<string, unknown> = { cursors };
      if (start + page.length < all.length) {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(query)) if (typeof v === 'string' && k !== 'after') q.set(k, v);
        q.set('after', cursors.after);
        paging.next = `message_templates?${q.toString()}`;
      }
      body.paging = paging;
    }
    return { status: 200, body };
  }

  /**
   * `POST /{waba-id}/message_templates`. The sandbox reviews at once: a
   * well-formed template is APPROVED (or takes the `status` given, so a
   * paused or rejected template can be tried out).
   */
  async createTemplate(businessAccountId: string, bearer: string | undefined, body: unknown): Promise<GraphReply> {
    const auth = await this.authorizeBusiness(businessAccountId, bearer);
    if (auth) return auth;
    const parsed = graphTemplateDefinitionSchema.omit({ status: true }).extend({ status: graphTemplateDefinitionSchema.shape.status.optional() }).safeParse(body);
    if (!parsed.success) return graphError(100, `Invalid parameter: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`, trace());
    const t = parsed.data;
    if (!/^[a-z0-9_]{1,512}$/.test(t.name)) return graphError(100, 'template names are lowercase letters, digits and underscores', trace());
    if (!(TEMPLATE_CATEGORIES as readonly string[]).includes(t.category.toUpperCase())) return graphError(100, `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}`, trace());
    if (!t.components.some((c) => c.type.toUpperCase() === 'BODY')) return graphError(100, 'a template needs a BODY component', trace());
    const existing = (await this.o.state.listTemplates(businessAccountId)).find((x) => x.name === t.name && x.language === t.language);
    const stored: SandboxTemplate = { ...t, id: existing?.id ?? digits(16), category: t.category.toUpperCase(), status: t.status ?? 'APPROVED' };
    await this.o.state.putTemplate(businessAccountId, stored);
    return { status: 200, body: { id: stored.id, status: stored.status, category: stored.category } };
  }

  /** `DELETE /{waba-id}/message_templates?name=…[&language=…]` */
  async deleteTemplate(businessAccountId: string, bearer: string | undefined, query: Record<string, unknown>): Promise<GraphReply> {
    const auth = await this.authorizeBusiness(businessAccountId, bearer);
    if (auth) return auth;
    const name = typeof query.name === 'string' ? query.name : undefined;
    if (!name) return graphError(131008, 'The parameter name is required', trace());
    const language = typeof query.language === 'string' ? query.language : undefined;
    const n = await this.o.state.deleteTemplates(businessAccountId, name, language);
    if (n === 0) return graphError(100, `Message template "${name}" not found`, trace());
    return { status: 200, body: { success: true } };
  }

  // ------------------------------------------------------------------ the customer's side

  /** The simulated customer writes a text message to the business number. */
  async customerText(phoneNumberId: string, customer: string, text: string, profileName?: string): Promise<CustomerActionResult> {
    return this.customerMessage(phoneNumberId, customer, profileName, { type: 'text', text: { body: text } });
  }

  /** The customer taps a reply button of an interactive message they received. */
  /** The customer shares a place (a pin, or a named place with its address). */
  async customerLocation(phoneNumberId: string, customer: string, location: { latitude: number; longitude: number; name?: string; address?: string }, profileName?: string): Promise<CustomerActionResult> {
    return this.customerMessage(phoneNumberId, customer, profileName, { type: 'location', location });
  }

  /** The customer shares contact cards (the Cloud API's card shape: name.formatted_name, phones, emails, …). */
  async customerContacts(phoneNumberId: string, customer: string, contacts: Record<string, unknown>[], profileName?: string): Promise<CustomerActionResult> {
    return this.customerMessage(phoneNumberId, customer, profileName, { type: 'contacts', contacts } as Omit<GraphWebhookMessage, 'from' | 'id' | 'timestamp'>);
  }

  /** The customer reacts to a message of the conversation (either way); an empty emoji takes the reaction back. */
  async customerReaction(phoneNumberId: string, customer: string, messageId: string, emoji: string, profileName?: string): Promise<CustomerActionResult> {
    const m = await this.o.state.getMessage(messageId);
    if (m === null || m.phoneNumberId !== phoneNumberId || m.customer !== (await this.keyOf(phoneNumberId, customer))) throw new AppError(404, 'not_found', "no such message on this customer's phone");
    return this.customerMessage(phoneNumberId, customer, profileName, { type: 'reaction', reaction: { message_id: messageId, emoji } } as Omit<GraphWebhookMessage, 'from' | 'id' | 'timestamp'>);
  }

  async customerTapButton(phoneNumberId: string, customer: string, messageId: string, buttonId: string, profileName?: string): Promise<CustomerActionResult> {
    const m = await this.receivedMessage(phoneNumberId, customer, messageId);
    const button = m.buttons?.find((b) => b.id === buttonId);
    if (!m.buttons) throw new AppError(400, 'not_an_interactive_message', 'that message has no reply buttons');
    if (!button) throw new AppError(400, 'no_such_button', `that message has no button with id ${JSON.stringify(buttonId)}`, { buttons: m.buttons });
    const account = (await this.o.state.getAccount(phoneNumberId))!;
    return this.customerMessage(phoneNumberId, customer, profileName, {
      type: 'interactive',
      interactive: { type: 'button_reply', button_reply: { id: button.id, title: button.title } },
      context: { from: account.displayPhoneNumber, id: m.id },
    });
  }

  /**
   * The customer answers a contact-information request by sharing their
   * number: a `contacts` message with `origin: contact_request`, the card
   * carrying the number. Only a customer with a number can share one.
   */
  async customerShareContactInfo(phoneNumberId: string, customer: string, messageId: string): Promise<CustomerActionResult> {
    const m = await this.receivedMessage(phoneNumberId, customer, messageId);
    if (m.requestsContactInfo !== true) throw new AppError(400, 'not_a_contact_request', 'that message does not ask for the contact information');
    const account = (await this.o.state.getAccount(phoneNumberId))!;
    const who = await this.customerOf(account, customer);
    if (who?.phone === undefined) throw new AppError(400, 'no_phone_number', 'this customer has no phone number to share');
    const name = who.profileName ?? who.username ?? 'Customer';
    return this.customerMessage(phoneNumberId, customer, undefined, {
      type: 'contacts',
      origin: 'contact_request',
      contacts: [{ name: { formatted_name: name, first_name: name }, phones: [{ phone: `+${who.phone}`, wa_id: who.phone, type: 'CELL' }] }],
      context: { from: account.displayPhoneNumber, id: m.id },
    } as Omit<GraphWebhookMessage, 'from' | 'id' | 'timestamp'>);
  }

  /** The customer taps a quick-reply button of a template message they received. */
  async customerTapQuickReply(phoneNumberId: string, customer: string, messageId: string, index: number, profileName?: string): Promise<CustomerActionResult> {
    const m = await this.receivedMessage(phoneNumberId, customer, messageId);
    if (!m.quickReplies || m.quickReplies.length === 0) throw new AppError(400, 'no_quick_replies', 'that message has no quick-reply buttons');
    const qr = m.quickReplies.find((q) => q.index === index);
    if (!qr) throw new AppError(400, 'no_such_button', `that message has no quick-reply button at index ${index}`, { quickReplies: m.quickReplies });
    const account = (await this.o.state.getAccount(phoneNumberId))!;
    return this.customerMessage(phoneNumberId, customer, profileName, {
      type: 'button',
      button: { payload: qr.payload, text: qr.text },
      context: { from: account.displayPhoneNumber, id: m.id },
    });
  }

  /**
   * The customer sends a photo, video, voice note or document. As on the real
   * network the webhook carries only the media id, type, hash and caption; the
   * business fetches the file with `GET /{media-id}` and the URL that answers.
   */
  async customerMedia(
    phoneNumberId: string,
    customer: string,
    file: { kind: CustomerMediaKind; mimeType: string; bytes: Buffer; caption?: string; filename?: string },
    profileName?: string,
  ): Promise<CustomerActionResult> {
    if (file.bytes.length === 0) throw new AppError(400, 'validation_failed', 'the file is empty');
    if (file.bytes.length > SANDBOX_MEDIA_MAX_BYTES) throw new AppError(400, 'validation_failed', `the sandbox takes files up to ${SANDBOX_MEDIA_MAX_BYTES / 1024} KiB`);
    if (!CUSTOMER_MEDIA_TYPES[file.kind].includes(file.mimeType)) {
      throw new AppError(400, 'validation_failed', `a ${file.kind} must be one of ${CUSTOMER_MEDIA_TYPES[file.kind].join(', ')}`);
    }
    if (file.caption !== undefined && file.kind === 'audio') throw new AppError(400, 'validation_failed', 'a voice note has no caption');
    const account = await this.o.state.getAccount(phoneNumberId);
    if (account === null) throw new AppError(404, 'not_found', 'no such sandbox phone number');
    const sha256 = createHash('sha256').update(file.bytes).digest('hex');
    const id = digits(16);
    await this.o.state.putMedia({ id, phoneNumberId, mimeType: file.mimeType, sha256, fileSize: file.bytes.length, data: file.bytes.toString('base64'), at: this.o.clock.now() });
    const media: Record<string, string> = { id, mime_type: file.mimeType, sha256 };
    if (file.caption !== undefined) media.caption = file.caption;
    if (file.kind === 'document' && file.filename !== undefined) media.filename = file.filename;
    return this.customerMessage(phoneNumberId, customer, profileName, { type: file.kind, [file.kind]: media });
  }

  /** `GET /{media-id}`: the file's description and a download URL under `filesBaseUrl` that takes the same token. */
  async mediaInfo(mediaId: string, bearer: string | undefined, filesBaseUrl: string): Promise<GraphReply> {
    // `GET /{id}` names a phone number too: its own token reads it.
    const number = /^\d{1,20}$/.test(mediaId) ? await this.o.state.getAccount(mediaId) : null;
    if (number !== null) {
      const auth = await this.authorize(number.phoneNumberId, bearer);
      return 'status' in auth ? auth : { status: 200, body: phoneNumberView(number) };
    }
    const found = await this.authorizedMedia(mediaId, bearer);
    if ('status' in found) return found;
    const m = found.media;
    const url = `${filesBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(m.id)}?ext=${m.at}&hash=${m.sha256.slice(0, 16)}`;
    return { status: 200, body: { messaging_product: 'whatsapp', url, mime_type: m.mimeType, sha256: m.sha256, file_size: String(m.fileSize), id: m.id } };
  }

  /** The download behind a media URL: the bytes, for the bearer of the receiving number's token only. */
  async mediaFile(mediaId: string, bearer: string | undefined): Promise<{ status: 200; mimeType: string; bytes: Buffer } | GraphReply> {
    const found = await this.authorizedMedia(mediaId, bearer);
    if ('status' in found) return found;
    return { status: 200, mimeType: found.media.mimeType, bytes: Buffer.from(found.media.data, 'base64') };
  }

  private async authorizedMedia(mediaId: string, bearer: string | undefined) {
    const media = /^\d{1,20}$/.test(mediaId) ? await this.o.state.getMedia(mediaId) : null;
    if (media === null) {
      if (!bearer) return graphError(190, 'An access token is required to request this resource.', trace());
      if (!(await this.tokenKnown(bearer))) return graphError(190, 'Invalid OAuth access token - Cannot parse access token', trace());
      return unsupportedObject(mediaId, 'get');
    }
    const auth = await this.authorize(media.phoneNumberId, bearer);
    if ('status' in auth) return auth.status === 400 ? unsupportedObject(mediaId, 'get') : auth;
    return { media };
  }

  /** What the customer's phone shows: the conversation with the business number, oldest first. */
  async customerPhone(phoneNumberId: string, customer: string, limit = 50): Promise<SandboxMessage[]> {
    return this.o.state.conversation(phoneNumberId, await this.keyOf(phoneNumberId, customer), limit);
  }

  /**
   * A WhatsApp user of the number's business portfolio who adopts a username
   * and may hide their number: given a BSUID of their own (`US.` and 20
   * digits), known by it from then on. With `phone`, the same person as that
   * number's customer (their BSUID stays the one the number already had).
   */
  async createCustomer(phoneNumberId: string, c: { phone?: string; username: string; hidePhone: boolean; profileName?: string }): Promise<SandboxCustomer> {
    const account = await this.o.state.getAccount(phoneNumberId);
    if (account === null) throw new AppError(404, 'not_found', 'no such sandbox phone number');
    const waba = account.businessAccountId;
    const known = c.phone === undefined ? null : await this.o.state.customerByPhone(waba, c.phone);
    const userId = known?.userId ?? (c.phone === undefined ? `US.${digits(20)}` : derivedUserId(waba, c.phone));
    const customer: SandboxCustomer = { businessAccountId: waba, userId, username: c.username, hidePhone: c.hidePhone };
    if (c.phone !== undefined) customer.phone = c.phone;
    if (c.profileName !== undefined) customer.profileName = c.profileName;
    await this.o.state.putCustomer(customer);
    return customer;
  }

  /**
   * The customer a phone number or BSUID names in the number's portfolio. A
   * number never seen is a WhatsApp user all the same (as on the network),
   * with a BSUID derived from it; a BSUID must be one the network gave.
   */
  private async customerOf(account: SandboxAccount, ref: string): Promise<SandboxCustomer | null> {
    const waba = account.businessAccountId;
    if (PHONE_DIGITS_PATTERN.test(ref)) {
      const known = await this.o.state.customerByPhone(waba, ref);
      if (known !== null) return known;
      const c: SandboxCustomer = { businessAccountId: waba, userId: derivedUserId(waba, ref), phone: ref, hidePhone: false };
      await this.o.state.putCustomer(c);
      return c;
    }
    return this.o.state.getCustomer(waba, ref);
  }

  /** The simulated phone's key of the customer a phone number or BSUID names (the ref itself when unknown). */
  private async keyOf(phoneNumberId: string, ref: string): Promise<string> {
    const account = await this.o.state.getAccount(phoneNumberId);
    const c = account === null ? null : await this.customerOf(account, ref);
    return c === null ? ref : sandboxCustomerKey(c);
  }

  private async receivedMessage(phoneNumberId: string, customer: string, messageId: string): Promise<SandboxMessage> {
    const m = await this.o.state.getMessage(messageId);
    if (m === null || m.phoneNumberId !== phoneNumberId || m.customer !== (await this.keyOf(phoneNumberId, customer)) || m.direction !== 'to_customer') {
      throw new AppError(404, 'not_found', 'no such message on this customer\'s phone');
    }
    if (m.status === 'failed') throw new AppError(400, 'message_not_delivered', 'that message never reached the customer');
    return m;
  }

  private async customerMessage(
    phoneNumberId: string,
    ref: string,
    profileName: string | undefined,
    content: Omit<GraphWebhookMessage, 'from' | 'id' | 'timestamp'>,
  ): Promise<CustomerActionResult> {
    const account = await this.o.state.getAccount(phoneNumberId);
    if (account === null) throw new AppError(404, 'not_found', 'no such sandbox phone number');
    if (!CUSTOMER_ADDRESS_PATTERN.test(ref)) {
      throw new AppError(400, 'validation_failed', 'the customer is a number of 7 to 15 digits, no +, or the business-scoped user id of a customer made with POST /v1/sandbox/channels/{channelId}/customers');
    }
    const who = await this.customerOf(account, ref);
    if (who === null) throw new AppError(404, 'not_found', 'no customer with this business-scoped user id on this number: make one with POST /v1/sandbox/channels/{channelId}/customers');
    const customer = sandboxCustomerKey(who);
    const at = this.o.clock.now();
    // As Meta shapes it: the BSUID always, the phone only when the customer shows it, the username once adopted.
    const shown = who.phone !== undefined && !who.hidePhone ? who.phone : undefined;
    const message = { ...(shown === undefined ? {} : { from: shown }), from_user_id: who.userId, id: wamid(), timestamp: unix(at), ...content } as GraphWebhookMessage;
    await this.o.state.noteInbound(phoneNumberId, customer, at);
    await this.o.state.putMessage({ id: message.id, phoneNumberId, customer, direction: 'from_customer', at, received: message });
    const profile: Record<string, string> = { name: profileName ?? who.profileName ?? `Customer ${(who.phone ?? who.userId).slice(-4)}` };
    if (who.username !== undefined) profile.username = who.username;
    const delivered = await this.deliver(account, {
      contacts: [{ profile, ...(shown === undefined ? {} : { wa_id: shown }), user_id: who.userId }],
      messages: [message],
    });
    return { messageId: message.id, delivered };
  }

  // ------------------------------------------------------------------ webhooks

  /**
   * Posts one change to the account's callback URL, signed. Resolves with the
   * outcome of the first attempt; failed deliveries are retried in the
   * background on the retry schedule, as the network does.
   */
  private async deliver(account: SandboxAccount, value: Record<string, unknown>): Promise<boolean> {
    const envelope = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: account.businessAccountId,
          changes: [
            {
              value: { messaging_product: 'whatsapp', metadata: { display_phone_number: account.displayPhoneNumber, phone_number_id: account.phoneNumberId }, ...value },
              field: 'messages',
            },
          ],
        },
      ],
    };
    const body = JSON.stringify(envelope);
    const ok = await this.post(account, body);
    if (!ok) this.track(this.redeliver(account, body));
    return ok;
  }

  private async redeliver(account: SandboxAccount, body: string): Promise<void> {
    for (const delay of this.retryDelays) {
      if (!(await this.sleep(delay))) return;
      // Re-read: the callback URL or app secret may have changed meanwhile.
      const current = (await this.o.state.getAccount(account.phoneNumberId)) ?? account;
      if (await this.post(current, body)) return;
    }
    this.o.log.warn('sandbox webhook dropped after retries', { phoneNumberId: account.phoneNumberId });
  }

  private async post(account: SandboxAccount, body: string): Promise<boolean> {
    if (this.closed) return false;
    try {
      const res = await this.http.request(this.resolveCallback(account.callbackUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'facebookexternalua',
          'x-hub-signature-256': signHubSignature(account.appSecret, body),
        },
        body,
        timeoutMs: 20_000,
      });
      return res.status === 200;
    } catch (err) {
      this.o.log.debug('sandbox webhook delivery failed', { err });
      return false;
    }
  }

  private resolveCallback(url: string): string {
    return url.startsWith('/') ? this.o.webhookBaseUrl().replace(/\/+$/, '') + url : url;
  }

  // ------------------------------------------------------------------ auth, lifecycle

  private async authorize(phoneNumberId: string, bearer: string | undefined): Promise<{ account: SandboxAccount } | GraphReply> {
    if (!bearer) return graphError(190, 'An access token is required to request this resource.', trace());
    const account = await this.o.state.getAccount(phoneNumberId);
    if (account !== null && account.accessToken === bearer) return { account };
    if (!(await this.tokenKnown(bearer))) return graphError(190, 'Invalid OAuth access token - Cannot parse access token', trace());
    return unsupportedObject(phoneNumberId);
  }

  private async authorizeBusiness(businessAccountId: string, bearer: string | undefined): Promise<GraphReply | null> {
    if (!bearer) return graphError(190, 'An access token is required to request this resource.', trace());
    const accounts = await this.o.state.accountsOfBusiness(businessAccountId);
    if (accounts.some((a) => a.accessToken === bearer)) return null;
    if (!(await this.tokenKnown(bearer))) return graphError(190, 'Invalid OAuth access token - Cannot parse access token', trace());
    return unsupportedObject(businessAccountId);
  }

  private async tokenKnown(bearer: string): Promise<boolean> {
    return (await this.o.state.listAccounts()).some((a) => a.accessToken === bearer);
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((err) => this.o.log.warn('sandbox background task failed', { err })).finally(() => this.tasks.delete(t));
    this.tasks.add(t);
  }

  /** Resolves true after `ms`, or false at once when the sandbox is closing. */
  private sleep(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve(!this.closed);
      }, ms);
      this.timers.set(timer, () => resolve(false));
    });
  }

  /** Waits (up to `timeoutMs`) until no status report or redelivery is pending: for tests and benchmarks. */
  async idle(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.tasks.size > 0 && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.tasks]), new Promise((r) => setTimeout(r, 25))]);
    }
  }

  /** Stops redeliveries and pending status reports. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, cancel] of this.timers) {
      clearTimeout(timer);
      cancel();
    }
    this.timers.clear();
    await Promise.allSettled([...this.tasks]);
    this.http.close();
  }
}

function trace(): string {
  return randomBytes(12).toString('base64url');
}

function unsupportedObject(id: string, method: 'get' | 'post' = 'post'): GraphReply {
  const body: GraphErrorEnvelope = {
    error: {
      message: `Unsupported ${method} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      type: 'GraphMethodException',
      code: 100,
      error_subcode: 33,
      fbtrace_id: trace(),
    },
  };
  return { status: 400, body };
}

/**
 * A sandbox number as `GET /{phone-number-id}` answers by default: verified,
 * of high quality, on the Cloud API (Meta's PhoneNumberInfo).
 */
function phoneNumberView(a: SandboxAccount) {
  return {
    verified_name: a.verifiedName,
    code_verification_status: 'VERIFIED',
    display_phone_number: a.displayPhoneNumber,
    quality_rating: 'GREEN',
    name_status: 'APPROVED',
    platform_type: 'CLOUD_API',
    throughput: { level: 'STANDARD' },
    id: a.phoneNumberId,
  };
}

/** The BSUID a number's customer has in a portfolio on the sandbox network: stable, and another per portfolio (as Meta's). */
function derivedUserId(businessAccountId: string, phone: string): string {
  const h = createHash('sha256').update(`${businessAccountId}\u0000${phone}`).digest();
  return `US.${h.readBigUInt64BE(0).toString().padStart(20, '0').slice(0, 20)}`;
}
