import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { AppError, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import type { OrganizationRepo } from '../store/core/port.js';
import type { VisitorRepo } from '../store/visitors/port.js';
import { messagesPerSecondOf, type Channel, type ChannelRepo, type WebChatChannel, type WhatsAppChannel, type WidgetSettings } from '../store/channels/port.js';
import type { TemplateRecord, TemplateRepo } from '../store/templates/port.js';
import type { CreditEntry, CreditRepo } from '../store/credits/port.js';
import {
  graphTemplateComponentSchema,
  TEMPLATE_CATEGORIES,
  TEMPLATE_STATUSES,
  type GraphTemplateDefinition,
} from '../network/graph-api.js';
import { MediaTooLargeError, NetworkRejectedError, NetworkUnavailableError, networkAccountOf, type ChatNetwork, type NetworkMedia } from '../network/port.js';
import { shapeFromDefinition } from '../network/template-rules.js';
import { GRAPH_API_VERSIONS, graphVersionInfo, type GraphApiInUse } from '../network/graph-versions.js';
import type { SandboxNetwork } from '../network/sandbox/index.js';
import { isLoopback } from '../webhooks/index.js';
import { routingOf, type ChannelRouting } from '../domain/routing.js';
import { mergeRouting, routingPatch, type RoutingPatch } from './routing-settings.js';

const name = z.string().trim().min(1).max(120);
/** Above the Cloud API's highest tier (1,000) only for networks or sandboxes that allow it. */
const messagesPerSecond = z.number().int().min(1).max(10_000).describe("the number's throughput tier: sends per second the network accepts from it; sends above it wait their turn (default 80)");
const digits = z.string().regex(/^[0-9]{5,20}$/, 'digits only');
/** A Graph API version Meta has published (`v27.0`): the channel's requests name it instead of the deployment's default. */
const graphApiVersion = z
  .string()
  .refine((v) => graphVersionInfo(v) !== null, { message: `must be a Graph API version Meta publishes: ${GRAPH_API_VERSIONS.map((v) => v.version).join(', ')}` })
  .describe("the Graph API version this number's requests use (default: the deployment's GRAPH_API_VERSION)");

/** How the widget looks and greets (all optional: the widget has defaults). */
export const widgetSettingsSchema = z
  .object({
    color: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'a colour as #rrggbb').optional().describe("the launcher's and the visitor's bubbles' colour"),
    title: z.string().trim().min(1).max(60).optional().describe("the panel's title"),
    greeting: z.string().trim().min(1).max(300).optional().describe('the first line a visitor sees'),
    position: z.enum(['right', 'left']).optional().describe('which bottom corner the launcher sits in'),
    preChatForm: z.boolean().optional().describe("ask a new visitor's name and email before the first message"),
  })
  .strict()
  .meta({ examples: [{ color: '#0b6bcb', title: 'Chat with Acme', greeting: 'Hi! How can we help?', position: 'right', preChatForm: false }] });

export const createChannelBody = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('whatsapp_cloud'),
      name,
      /** `graph`: a real WhatsApp Business number (give its ids and secrets). `sandbox`: a number on the sandbox network, provisioned now. */
      network: z.enum(['graph', 'sandbox']).default('graph'),
      phoneNumberId: digits.optional(),
      businessAccountId: digits.optional(),
      displayPhoneNumber: z.string().regex(/^[0-9]{7,15}$/, 'digits only, no +').optional(),
      accessToken: z.string().min(10).max(1024).optional(),
      appSecret: z.string().min(8).max(256).optional(),
      /** Unset: generated, and shown once in the response. */
      verifyToken: z.string().min(8).max(256).optional(),
      messagesPerSecond: messagesPerSecond.optional(),
      graphApiVersion: graphApiVersion.optional(),
    })
    .superRefine((b, ctx) => {
      const given = (['phoneNumberId', 'businessAccountId', 'accessToken', 'appSecret'] as const).filter((k) => b[k] !== undefined);
      if (b.network === 'graph') {
        for (const k of ['phoneNumberId', 'businessAccountId', 'accessToken', 'appSecret'] as const) {
          if (b[k] === undefined) ctx.addIssue({ code: 'custom', path: [k], message: `${k} is required for a channel on the real network` });
        }
      } else {
        for (const k of given) ctx.addIssue({ code: 'custom', path: [k], message: 'a sandbox channel is provisioned by the sandbox network; do not give credentials' });
      }
    }),
  z.object({
    kind: z.literal('web_chat'),
    name,
    allowedOrigins: z.array(z.url({ protocol: /^https?$/ })).max(20).default([]),
    widget: widgetSettingsSchema.optional(),
  }),
]);

/** A web chat's settings: where it may be embedded and how the widget looks. */
export const updateWebChatBody = z
  .object({
    allowedOrigins: z.array(z.url({ protocol: /^https?$/ })).max(20).optional().describe('the pages (origins) the widget may talk from'),
    widget: widgetSettingsSchema.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field');
export type UpdateWebChatBody = z.infer<typeof updateWebChatBody>;
export type CreateChannelBody = z.infer<typeof createChannelBody>;

export const updateChannelBody = z
  .object({
    name: name.optional(),
    accessToken: z.string().min(10).max(1024).optional(),
    appSecret: z.string().min(8).max(256).optional(),
    verifyToken: z.string().min(8).max(256).optional(),
    messagesPerSecond: messagesPerSecond.optional(),
    graphApiVersion: graphApiVersion.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field');
export type UpdateChannelBody = z.infer<typeof updateChannelBody> & { routing?: RoutingPatch };

/** What an organization's admin may change of a channel (`PATCH /v1/channels/{channelId}`): its name and its routing. */
export const patchChannelBody = z
  .object({ name: name.optional(), routing: routingPatch.optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, routing');
export type PatchChannelBody = z.infer<typeof patchChannelBody>;

export const templateBody = z.object({
  name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'lowercase letters, digits and _'),
  language: z.string().regex(/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/, 'a language code such as en or en_US'),
  category: z.enum(TEMPLATE_CATEGORIES),
  status: z.enum(TEMPLATE_STATUSES).default('APPROVED'),
  components: z
    .array(graphTemplateComponentSchema)
    .min(1)
    .max(10)
    .refine((cs) => cs.some((c) => c.type.toUpperCase() === 'BODY'), 'a template needs a BODY component'),
});
export type TemplateBody = z.infer<typeof templateBody>;

export const topUpBody = z.object({
  amount: z.number().int().min(1).max(1_000_000_000),
  /** Makes a retried top-up count once. */
  operationId: z.string().min(1).max(128).optional(),
});

/** A channel as the API shows it: never its secrets. */
export interface ChannelView {
  id: string;
  organizationId: string;
  name: string;
  kind: Channel['kind'];
  createdAt: string;
  updatedAt: string;
  network?: 'graph' | 'sandbox';
  phoneNumberId?: string;
  businessAccountId?: string;
  displayPhoneNumber?: string | null;
  /** Sends per second the number is paced to. */
  messagesPerSecond?: number;
  /** The Graph API version its requests use, and when Meta retires it (null: no date published). */
  graphApi?: GraphApiInUse;
  allowedOrigins?: string[];
  /** A web chat's widget settings. */
  widget?: WidgetSettings;
  /** A web chat: whether it has an identity secret (signed-in users can be verified). */
  identityVerification?: boolean;
  /** A web chat's identity secret: shown only when it was just made (rotate it to see a new one). */
  identitySecret?: string;
  /** Where the network must send its webhooks (configure it in Meta's app dashboard for `graph` channels). */
  webhook?: { url: string; verifyToken?: string };
  /** Who answers first, bot fallback, auto-assignment, business hours (the defaults when never set). */
  routing: ChannelRouting;
}

export interface ChannelServiceDeps {
  channels: ChannelRepo;
  /** The Graph API version of channels that name none (GRAPH_API_VERSION, or the built-in default). */
  defaultGraphApiVersion: string;
  templates: TemplateRepo;
  credits: CreditRepo;
  organizations: OrganizationRepo;
  networkFor(channel: WhatsAppChannel): ChatNetwork;
  sandbox: SandboxNetwork | null;
  /** Base URL the network reaches this service at (for the webhook URL shown to operators). */
  publicBaseUrl(): string;
  prices: Record<string, number>;
  clock: Clock;
  log: Logger;
  /** Whether secrets can be sealed (false clustered without SECRETS_KEY): a web chat is then made without an identity secret. */
  secretsKey: boolean;
  /** Web chat files, which agents read where they read a chat network's media. */
  visitors: VisitorRepo;
}

export const webhookPath = (channelId: string) => `/webhooks/whatsapp/${channelId}`;

/**
 * What operators do with channels, templates and credits (admin API and CLI).
 * Every method is scoped to the organization in its first argument.
 */
/** The largest customer media file the service passes through to agents. */
export const MEDIA_PROXY_MAX_BYTES = 16 * 1024 * 1024;

export class ChannelService {
  constructor(private readonly d: ChannelServiceDeps) {}

  private now(): string {
    return new Date(this.d.clock.now()).toISOString();
  }

  /**
   * Every WhatsApp channel of the deployment with the Graph API version its
   * requests use and Meta's expiry of it (`/readyz`, and the start-up
   * warning). Read at most once a minute; a channel this node creates or
   * changes shows at once (another node's, within the minute).
   */
  async graphApiVersions(): Promise<Record<string, GraphApiInUse>> {
    const now = this.d.clock.now();
    if (this.graphApiSeen !== null && now - this.graphApiSeen.at < 60_000) return this.graphApiSeen.value;
    const out: Record<string, GraphApiInUse> = {};
    for (const org of await this.d.organizations.list()) {
      for (const c of await this.d.channels.list(org.id)) if (c.kind === 'whatsapp_cloud' && c.network === 'graph') out[c.id] = this.graphApiOf(c);
    }
    this.graphApiSeen = { at: now, value: out };
    return out;
  }
  private graphApiSeen: { at: number; value: Record<string, GraphApiInUse> } | null = null;

  /** The Graph API version a channel's requests use, with Meta's expiry date of it. */
  graphApiOf(c: WhatsAppChannel): GraphApiInUse {
    const version = c.graphApiVersion ?? this.d.defaultGraphApiVersion;
    return { version, expiresOn: graphVersionInfo(version)?.expiresOn ?? null };
  }

  private async org(orgId: string): Promise<void> {
    if ((await this.d.organizations.get(orgId)) === null) throw notFound('organization');
  }

  view(c: Channel, reveal?: { verifyToken?: string }): ChannelView {
    const base = { id: c.id, organizationId: c.organizationId, name: c.name, kind: c.kind, createdAt: c.createdAt, updatedAt: c.updatedAt, routing: routingOf(c) };
    if (c.kind === 'web_chat') return { ...base, allowedOrigins: c.allowedOrigins, widget: c.widget ?? {}, identityVerification: c.identitySecret !== undefined };
    const webhook: ChannelView['webhook'] = { url: this.d.publicBaseUrl().replace(/\/+$/, '') + webhookPath(c.id) };
    if (reveal?.verifyToken) webhook.verifyToken = reveal.verifyToken;
    return { ...base, network: c.network, phoneNumberId: c.phoneNumberId, businessAccountId: c.businessAccountId, displayPhoneNumber: c.displayPhoneNumber, messagesPerSecond: messagesPerSecondOf(c), graphApi: this.graphApiOf(c), webhook };
  }

  /**
   * Graph (Meta) channels whose webhook URL is on a loopback address, which
   * the network cannot reach (PUBLIC_URL unset or pointing at this machine):
   * said at start-up so the operator sets PUBLIC_URL before messages go missing.
   */
  async unreachableGraphWebhooks(): Promise<{ organizationId: string; channelId: string; url: string }[]> {
    const base = this.d.publicBaseUrl().replace(/\/+$/, '');
    if (!isLoopbackUrl(base)) return [];
    const out: { organizationId: string; channelId: string; url: string }[] = [];
    for (const org of await this.d.organizations.list()) {
      for (const c of await this.d.channels.list(org.id)) {
        if (c.kind === 'whatsapp_cloud' && c.network === 'graph') out.push({ organizationId: org.id, channelId: c.id, url: base + webhookPath(c.id) });
      }
    }
    return out;
  }

  async create(orgId: string, body: CreateChannelBody): Promise<ChannelView & { templateSync?: { ok: boolean; synced?: number; error?: string } }> {
    await this.org(orgId);
    const id = 'ch_' + randomBytes(12).toString('base64url').replace(/[-_]/g, 'x');
    const at = this.now();
    if (body.kind === 'web_chat') {
      const c: WebChatChannel = { id, organizationId: orgId, name: body.name, kind: 'web_chat', allowedOrigins: normalOrigins(body.allowedOrigins), createdAt: at, updatedAt: at };
      if (body.widget !== undefined) c.widget = body.widget;
      if (this.d.secretsKey) c.identitySecret = newIdentitySecret();
      await this.d.channels.create(c);
      return { ...this.view(c), ...(c.identitySecret === undefined ? {} : { identitySecret: c.identitySecret }) };
    }
    let channel: WhatsAppChannel;
    let revealVerify: string | undefined;
    if (body.network === 'sandbox') {
      if (this.d.sandbox === null) throw new AppError(409, 'sandbox_disabled', 'the sandbox network is off on this deployment (SANDBOX_NETWORK=false)');
      const acct = await this.d.sandbox.provisionAccount({ callbackUrl: webhookPath(id), displayPhoneNumber: body.displayPhoneNumber, verifiedName: body.name });
      channel = {
        id,
        organizationId: orgId,
        name: body.name,
        kind: 'whatsapp_cloud',
        network: 'sandbox',
        phoneNumberId: acct.phoneNumberId,
        businessAccountId: acct.businessAccountId,
        displayPhoneNumber: acct.displayPhoneNumber,
        credentials: { accessToken: acct.accessToken, appSecret: acct.appSecret, verifyToken: acct.verifyToken },
        createdAt: at,
        updatedAt: at,
      };
      if (body.messagesPerSecond !== undefined) channel.messagesPerSecond = body.messagesPerSecond;
      if (body.graphApiVersion !== undefined) channel.graphApiVersion = body.graphApiVersion;
    } else {
      revealVerify = body.verifyToken === undefined ? randomBytes(18).toString('base64url') : undefined;
      channel = {
        id,
        organizationId: orgId,
        name: body.name,
        kind: 'whatsapp_cloud',
        network: 'graph',
        phoneNumberId: body.phoneNumberId!,
        businessAccountId: body.businessAccountId!,
        displayPhoneNumber: body.displayPhoneNumber ?? null,
        credentials: { accessToken: body.accessToken!, appSecret: body.appSecret!, verifyToken: body.verifyToken ?? revealVerify! },
        createdAt: at,
        updatedAt: at,
      };
      if (body.messagesPerSecond !== undefined) channel.messagesPerSecond = body.messagesPerSecond;
      if (body.graphApiVersion !== undefined) channel.graphApiVersion = body.graphApiVersion;
    }
    await this.d.channels.create(channel);
    this.graphApiSeen = null;
    let templateSync: { ok: boolean; synced?: number; error?: string };
    try {
      const r = await this.syncTemplates(orgId, channel.id);
      templateSync = { ok: true, synced: r.synced };
    } catch (e) {
      // The channel is usable without templates (buttons, media); sync can be run again later.
      templateSync = { ok: false, error: e instanceof Error ? e.message : String(e) };
      this.d.log.warn('template sync after channel creation failed', { channelId: channel.id, err: e });
    }
    return { ...this.view(channel, { verifyToken: revealVerify }), templateSync };
  }

  async list(orgId: string): Promise<ChannelView[]> {
    await this.org(orgId);
    return (await this.d.channels.list(orgId)).map((c) => this.view(c));
  }

  async get(orgId: string, channelId: string): Promise<Channel> {
    const c = await this.d.channels.get(orgId, channelId);
    if (c === null) throw notFound('channel');
    return c;
  }

  async update(orgId: string, channelId: string, body: UpdateChannelBody): Promise<ChannelView> {
    const c = await this.get(orgId, channelId);
    if (c.kind !== 'whatsapp_cloud' && (body.accessToken || body.appSecret || body.verifyToken)) {
      throw new AppError(400, 'validation_failed', 'only WhatsApp channels have credentials');
    }
    if (c.kind !== 'whatsapp_cloud' && body.graphApiVersion !== undefined) {
      throw new AppError(400, 'validation_failed', 'only WhatsApp channels speak the Graph API', [{ field: 'body.graphApiVersion', message: 'not a chat-network channel' }]);
    }
    if (c.kind !== 'whatsapp_cloud' && body.messagesPerSecond !== undefined) {
      throw new AppError(400, 'validation_failed', 'only WhatsApp channels have a throughput tier', [{ field: 'body.messagesPerSecond', message: 'not a chat-network channel' }]);
    }
    const next: Channel =
      c.kind === 'whatsapp_cloud'
        ? {
            ...c,
            name: body.name ?? c.name,
            credentials: {
              accessToken: body.accessToken ?? c.credentials.accessToken,
              appSecret: body.appSecret ?? c.credentials.appSecret,
              verifyToken: body.verifyToken ?? c.credentials.verifyToken,
            },
            ...(body.messagesPerSecond === undefined ? {} : { messagesPerSecond: body.messagesPerSecond }),
            ...(body.graphApiVersion === undefined ? {} : { graphApiVersion: body.graphApiVersion }),
            updatedAt: this.now(),
          }
        : { ...c, name: body.name ?? c.name, updatedAt: this.now() };
    if (body.routing !== undefined) next.routing = mergeRouting(routingOf(c), body.routing);
    await this.d.channels.update(next);
    this.graphApiSeen = null;
    return this.view(next);
  }

  /**
   * A new webhook verify token for a channel on the real network, shown this
   * once: Meta's app dashboard asks for it with the webhook URL, and the
   * token given at creation is never shown again. Sandbox channels are
   * subscribed by the sandbox network itself and keep theirs.
   */
  async newVerifyToken(orgId: string, channelId: string): Promise<ChannelView> {
    const c = await this.whatsapp(orgId, channelId);
    if (c.network === 'sandbox') throw new AppError(422, 'sandbox_channel', 'the sandbox network subscribes its channels itself: a sandbox channel has no verify token to configure');
    const verifyToken = randomBytes(18).toString('base64url');
    const next: WhatsAppChannel = { ...c, credentials: { ...c.credentials, verifyToken }, updatedAt: this.now() };
    await this.d.channels.update(next);
    return this.view(next, { verifyToken });
  }

  /** A web chat's allowed origins and widget settings. */
  async updateWebChat(orgId: string, channelId: string, body: UpdateWebChatBody): Promise<ChannelView> {
    const c = await this.webChat(orgId, channelId);
    const next: WebChatChannel = {
      ...c,
      ...(body.allowedOrigins === undefined ? {} : { allowedOrigins: normalOrigins(body.allowedOrigins) }),
      ...(body.widget === undefined ? {} : { widget: body.widget }),
      updatedAt: this.now(),
    };
    await this.d.channels.update(next);
    return this.view(next);
  }

  /**
   * A new identity secret for a web chat, shown this once: the business's
   * server signs its users' ids with it. Hashes made with the old one stop
   * verifying at once (tokens already given to verified visitors stay valid
   * until revoked).
   */
  async rotateIdentitySecret(orgId: string, channelId: string): Promise<ChannelView> {
    const c = await this.webChat(orgId, channelId);
    if (!this.d.secretsKey) throw new AppError(503, 'secrets_key_missing', 'SECRETS_KEY is not set: an identity secret cannot be stored (set the same 32-byte key, hex or base64, on every node)');
    const next: WebChatChannel = { ...c, identitySecret: newIdentitySecret(), updatedAt: this.now() };
    await this.d.channels.update(next);
    return { ...this.view(next), identitySecret: next.identitySecret! };
  }

  async webChat(orgId: string, channelId: string): Promise<WebChatChannel> {
    const c = await this.get(orgId, channelId);
    if (c.kind !== 'web_chat') throw new AppError(422, 'not_a_web_chat', 'this is a chat-network (WhatsApp) channel, not a web chat', { channelId, kind: c.kind });
    return c;
  }

  async delete(orgId: string, channelId: string): Promise<void> {
    if (!(await this.d.channels.delete(orgId, channelId))) throw notFound('channel');
    await this.d.templates.deleteChannel(orgId, channelId);
  }

  // ------------------------------------------------------------------ templates

  private async whatsapp(orgId: string, channelId: string): Promise<WhatsAppChannel> {
    const c = await this.get(orgId, channelId);
    if (c.kind !== 'whatsapp_cloud') throw new AppError(422, 'not_a_chat_channel', 'templates belong to chat-network (WhatsApp) channels');
    return c;
  }

  /**
   * A media file a customer sent on the channel, fetched from the network
   * with the channel's token (the network's own URL needs it, so agents
   * cannot open it directly). Files past `MEDIA_PROXY_MAX_BYTES` are refused.
   */
  async media(orgId: string, channelId: string, mediaId: string): Promise<NetworkMedia & { filename?: string }> {
    const any = await this.get(orgId, channelId);
    if (any.kind === 'web_chat') {
      // A web chat's files are this service's own: a visitor's upload or an agent's.
      const found = /^wca_[0-9a-f]{32}$/.test(mediaId) ? await this.d.visitors.getAttachment(orgId, channelId, mediaId) : null;
      if (found === null) throw notFound('media');
      return { mimeType: found.attachment.mimeType, bytes: found.bytes, filename: found.attachment.filename };
    }
    const c = await this.whatsapp(orgId, channelId);
    try {
      return await this.d.networkFor(c).downloadMedia(networkAccountOf(c), mediaId, MEDIA_PROXY_MAX_BYTES);
    } catch (e) {
      if (e instanceof MediaTooLargeError) throw new AppError(422, 'media_too_large', `files over ${MEDIA_PROXY_MAX_BYTES / 1024 / 1024} MiB are not passed through; fetch it with the Graph API`);
      if (e instanceof NetworkRejectedError) {
        // Unknown ids, expired files and ids of another number all look the same from here.
        if (e.rejection.httpStatus === 400 || e.rejection.httpStatus === 404) throw notFound('media');
        throw new AppError(502, 'network_rejected', `the chat network refused the media request: (#${e.rejection.code}) ${e.rejection.title}`);
      }
      if (e instanceof NetworkUnavailableError) throw new AppError(503, 'network_unavailable', e.message, undefined, { retryAfterSeconds: 5 });
      throw e;
    }
  }

  /** Pulls every template of the channel's business account from the network's template API into the registry. */
  async syncTemplates(orgId: string, channelId: string): Promise<{ synced: number; removed: number; templates: TemplateView[] }> {
    const c = await this.whatsapp(orgId, channelId);
    let defs: GraphTemplateDefinition[];
    try {
      defs = await this.d.networkFor(c).listTemplates(networkAccountOf(c));
    } catch (e) {
      if (e instanceof NetworkRejectedError) {
        const r = e.rejection;
        throw new AppError(502, 'network_rejected', `the chat network refused the template list: (#${r.code}) ${r.title}`, undefined, { extra: { errorDetails: { code: r.code, title: r.title, message: r.message } } });
      }
      if (e instanceof NetworkUnavailableError) throw new AppError(503, 'network_unavailable', e.message, undefined, { retryAfterSeconds: 5 });
      throw e;
    }
    const at = this.now();
    const records: TemplateRecord[] = defs.map((t) => ({
      organizationId: orgId,
      channelId: c.id,
      name: t.name,
      language: t.language,
      category: t.category.toUpperCase(),
      status: t.status.toUpperCase(),
      components: t.components,
      shape: shapeFromDefinition(t.components),
      networkTemplateId: t.id ?? null,
      source: 'network',
      updatedAt: at,
    }));
    const { removed } = await this.d.templates.replaceFromNetwork(orgId, c.id, records);
    return { synced: records.length, removed, templates: records.map(templateView) };
  }

  async listTemplates(orgId: string, channelId: string): Promise<TemplateView[]> {
    await this.whatsapp(orgId, channelId);
    return (await this.d.templates.list(orgId, channelId)).map(templateView);
  }

  /** An operator's own entry (or correction) in the registry; a later sync overwrites a network template of the same name and language. */
  async putTemplate(orgId: string, channelId: string, body: TemplateBody): Promise<TemplateView> {
    await this.whatsapp(orgId, channelId);
    const rec: TemplateRecord = {
      organizationId: orgId,
      channelId,
      name: body.name,
      language: body.language,
      category: body.category,
      status: body.status,
      components: body.components,
      shape: shapeFromDefinition(body.components),
      networkTemplateId: null,
      source: 'operator',
      updatedAt: this.now(),
    };
    await this.d.templates.put(rec);
    return templateView(rec);
  }

  async deleteTemplate(orgId: string, channelId: string, tname: string, language: string): Promise<void> {
    await this.whatsapp(orgId, channelId);
    if (!(await this.d.templates.delete(orgId, channelId, tname, language))) throw notFound('template');
  }

  // ------------------------------------------------------------------ credits

  async credits(orgId: string): Promise<{ organizationId: string; balance: number; prices: Record<string, number> }> {
    await this.org(orgId);
    return { organizationId: orgId, balance: await this.d.credits.balance(orgId), prices: this.d.prices };
  }

  /** The latest balance changes (top-ups, charges, refunds, releases), newest first. */
  async creditHistory(orgId: string, limit = 100): Promise<CreditEntry[]> {
    await this.org(orgId);
    return this.d.credits.history(orgId, limit);
  }

  async topUp(orgId: string, amount: number, operationId?: string): Promise<{ organizationId: string; balance: number; applied: boolean }> {
    await this.org(orgId);
    const r = await this.d.credits.topUp(orgId, amount, operationId);
    return { organizationId: orgId, ...r };
  }
}

export interface TemplateView {
  name: string;
  language: string;
  category: string;
  status: string;
  source: 'network' | 'operator';
  /** What a send must fill, per component. */
  variables: TemplateRecord['shape']['slots'];
  components: TemplateRecord['components'];
  updatedAt: string;
}

export function templateView(t: TemplateRecord): TemplateView {
  return { name: t.name, language: t.language, category: t.category, status: t.status, source: t.source, variables: t.shape.slots, components: t.components, updatedAt: t.updatedAt };
}

/** The origins as browsers send them (`https://shop.example`, no path, no trailing slash), each once. */
function normalOrigins(urls: string[]): string[] {
  return [...new Set(urls.map((u) => new URL(u).origin))];
}

function newIdentitySecret(): string {
  return 'wcs_' + randomBytes(32).toString('base64url');
}

/** A URL whose host is this machine: `localhost` (and its subdomains) or a loopback address. */
function isLoopbackUrl(raw: string): boolean {
  let host: string;
  try {
    host = new URL(raw).hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || isLoopback(host);
}
