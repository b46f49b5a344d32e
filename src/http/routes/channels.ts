import { z } from 'zod';
import { errorSchema, orgParams } from '../../app/schemas.js';
import { createChannelBody, patchChannelBody, routingPatch, routingView, templateBody, topUpBody, updateChannelBody, type ChannelService } from '../../messaging/index.js';
import { widgetSettingsSchema } from '../../messaging/channels.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';

const channelParams = z.object({ orgId: z.string().min(1).max(64), channelId: z.string().min(1).max(128) });
const templateParams = channelParams.extend({ name: z.string().min(1).max(512), language: z.string().min(1).max(16) });
export const channelView = z.object({
  id: z.string().describe('the channelId used in sends'),
  organizationId: z.string(),
  name: z.string(),
  kind: z.enum(['whatsapp_cloud', 'web_chat']),
  network: z.enum(['graph', 'sandbox']).optional(),
  phoneNumberId: z.string().optional(),
  businessAccountId: z.string().optional(),
  displayPhoneNumber: z.string().nullable().optional(),
  messagesPerSecond: z.number().int().optional().describe('the throughput tier the number is paced to (WhatsApp channels)'),
  graphApi: z
    .object({ version: z.string(), expiresOn: z.string().nullable() })
    .meta({ examples: [{ version: 'v27.0', expiresOn: null }] })
    .optional()
    .describe("the Graph API version the number's requests use, and the day Meta retires it (null: not published yet) (WhatsApp channels)"),
  allowedOrigins: z.array(z.string()).optional().describe('a web chat: the origins its widget may talk from'),
  widget: widgetSettingsSchema.optional().describe("a web chat: the widget's look"),
  identityVerification: z.boolean().optional().describe('a web chat: whether it has an identity secret (signed-in users can be verified)'),
  identitySecret: z.string().optional().describe("a web chat's identity secret: shown only when made (creation, rotation)"),
  webhook: z.object({ url: z.string(), verifyToken: z.string().optional().describe('shown once, when generated') }).optional(),
  routing: routingView.describe('who answers first, bot fallback, auto-assignment and business hours (see docs/routing.md)'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** A channel just created: its view, with the outcome of the first template sync. */
export const createdChannelView = channelView.extend({
  templateSync: z
    .object({ ok: z.boolean(), synced: z.number().int().optional(), error: z.string().optional().describe('why the sync failed; run the sync again') })
    .optional()
    .describe('present for WhatsApp channels: the first sync of the template registry from the network'),
});
export const templateView = z.object({
  name: z.string(),
  language: z.string(),
  category: z.string(),
  status: z.string(),
  source: z.enum(['network', 'operator']),
  variables: z.array(z.unknown()).describe('what a send must fill, per component'),
  components: z.array(z.unknown()),
  updatedAt: z.string(),
});
const creditsView = z.object({ organizationId: z.string(), balance: z.number().int(), prices: z.record(z.string(), z.number()).optional(), applied: z.boolean().optional() });

/** Operator API for channels, templates and credits (guarded by the operator token; used by `npm run admin`). */
export function channelAdminRoutes(channels: ChannelService): RouteDef[] {
  const base = { tag: 'Operator: messaging', auth: 'operator' as const };
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/channels',
      operationId: 'adminCreateChannel',
      example: { kind: 'whatsapp_cloud', name: 'Support line', network: 'graph', phoneNumberId: '109876543210987', businessAccountId: EXAMPLE_IDS.businessAccountId, displayPhoneNumber: '15550104477', accessToken: 'EAAJB4x9Zk2qLm7Pt3VnR8sYfN4hD6gZ', appSecret: '5f2c8e1a9b7d4c6e0a3f9b2d7c1e8a4f' },
      summary: 'Create a channel: a WhatsApp number on the real network (its ids and secrets) or on the sandbox network (provisioned now), or a web chat',
      params: orgParams,
      body: createChannelBody,
      responses: {
        201: {
          description: 'the channel (secrets never shown; a generated verify token once), with the outcome of the first template sync',
          schema: createdChannelView,
        },
        404: { description: 'no such organization', schema: errorSchema },
        409: { description: 'sandbox_disabled: the sandbox network is off on this deployment; or the phone number id is used by another channel', schema: errorSchema },
        503: { description: 'clustered without SECRETS_KEY: chat-network credentials cannot be stored', schema: errorSchema },
      },
      handler: async ({ params, body }) => ({ status: 201, body: await channels.create(params.orgId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/channels',
      operationId: 'adminListChannels',
      summary: 'List the channels of an organization',
      params: orgParams,
      responses: { 200: { description: 'channels', schema: z.object({ channels: z.array(channelView) }) } },
      handler: async ({ params }) => ({ body: { channels: await channels.list(params.orgId) } }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/channels/:channelId',
      operationId: 'adminGetChannel',
      summary: 'Get one channel',
      params: channelParams,
      responses: { 200: { description: 'the channel', schema: channelView }, 404: { description: 'no such channel', schema: errorSchema } },
      handler: async ({ params }) => ({ body: channels.view(await channels.get(params.orgId, params.channelId)) }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/admin/v1/organizations/:orgId/channels/:channelId',
      operationId: 'adminUpdateChannel',
      example: { name: 'Support line (EU)', messagesPerSecond: 20 },
      summary: 'Rename a channel or rotate its credentials',
      params: channelParams,
      body: updateChannelBody,
      responses: {
        200: { description: 'the channel', schema: channelView },
        404: { description: 'no such channel', schema: errorSchema },
        503: { description: 'clustered without SECRETS_KEY: chat-network credentials cannot be stored', schema: errorSchema },
      },
      handler: async ({ params, body }) => ({ body: await channels.update(params.orgId, params.channelId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/admin/v1/organizations/:orgId/channels/:channelId',
      operationId: 'adminDeleteChannel',
      summary: 'Delete a channel and its templates',
      params: channelParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such channel', schema: errorSchema } },
      handler: async ({ params }) => {
        await channels.delete(params.orgId, params.channelId);
        return { status: 204 };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/channels/:channelId/templates/sync',
      operationId: 'adminSyncTemplates',
      summary: "Sync the channel's template registry from the network's template API",
      params: channelParams,
      responses: {
        200: { description: 'the registry after the sync', schema: z.object({ synced: z.number().int(), removed: z.number().int(), templates: z.array(templateView) }) },
        502: { description: 'the network refused the request', schema: errorSchema },
        503: { description: 'the network is unreachable', schema: errorSchema },
      },
      handler: async ({ params }) => ({ body: await channels.syncTemplates(params.orgId, params.channelId) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/channels/:channelId/templates',
      operationId: 'adminListTemplates',
      summary: "The channel's template registry",
      params: channelParams,
      responses: { 200: { description: 'templates', schema: z.object({ templates: z.array(templateView) }) }, 422: { description: 'not_a_chat_channel: the channel is not a chat-network channel (web chat has no templates)', schema: errorSchema } },
      handler: async ({ params }) => ({ body: { templates: await channels.listTemplates(params.orgId, params.channelId) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/channels/:channelId/templates',
      operationId: 'adminCreateTemplate',
      example: { name: 'delivery_delay', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}, your order {{2}} is running a day late. Sorry for the wait.' }, { type: 'FOOTER', text: 'Acme Support' }] },
      summary: 'Add or replace a template in the registry by hand (name + language); a later sync overwrites network templates',
      params: channelParams,
      body: templateBody,
      responses: { 201: { description: 'the template', schema: templateView }, 422: { description: 'not_a_chat_channel: the channel is not a chat-network channel (web chat has no templates)', schema: errorSchema } },
      handler: async ({ params, body }) => ({ status: 201, body: await channels.putTemplate(params.orgId, params.channelId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/admin/v1/organizations/:orgId/channels/:channelId/templates/:name/:language',
      operationId: 'adminDeleteTemplate',
      summary: 'Remove a template from the registry',
      params: templateParams,
      responses: { 204: { description: 'removed' }, 404: { description: 'no such template', schema: errorSchema } },
      handler: async ({ params }) => {
        await channels.deleteTemplate(params.orgId, params.channelId, params.name, params.language);
        return { status: 204 };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/credits',
      operationId: 'adminGetCredits',
      summary: "The organization's credit balance and the price of a template send per category",
      params: orgParams,
      responses: { 200: { description: 'balance', schema: creditsView } },
      handler: async ({ params }) => ({ body: await channels.credits(params.orgId) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/credits/top-up',
      operationId: 'adminTopUpCredits',
      example: { amount: 500, operationId: 'topup-2026-01-05-acme' },
      summary: 'Add credits (operationId makes a retried top-up count once)',
      params: orgParams,
      body: topUpBody,
      responses: { 200: { description: 'the new balance', schema: creditsView } },
      handler: async ({ params, body }) => ({ body: await channels.topUp(params.orgId, body.amount, body.operationId) }),
    }),
  ];
}

/** What an API key sees of its organization's channels: the channelIds to send on, and their templates. */
export function channelRoutes(channels: ChannelService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/channels',
      operationId: 'listChannels',
      summary: "The organization's channels (the channelId of every send)",
      tag: 'Channels',
      auth: 'apiKey',
      responses: { 200: { description: 'channels', schema: z.object({ channels: z.array(channelView) }) } },
      handler: async ({ principal }) => ({ body: { channels: await channels.list(principal.organizationId) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/channels/:channelId',
      operationId: 'getChannel',
      summary: 'One channel of the organization, with its routing settings',
      tag: 'Channels',
      auth: 'apiKey',
      params: z.object({ channelId: z.string().min(1).max(128) }),
      responses: { 200: { description: 'the channel', schema: channelView }, 404: { description: 'no such channel in the organization', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: channels.view(await channels.get(principal.organizationId, params.channelId)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/channels/:channelId',
      operationId: 'updateChannel',
      summary: "Rename a channel or change its routing: who answers first, the bot's fallback, auto-assignment, business hours",
      tag: 'Channels',
      auth: 'apiKey',
      scope: 'settings:manage',
      params: z.object({ channelId: z.string().min(1).max(128) }),
      body: patchChannelBody.meta({ examples: [{ routing: { firstResponder: 'bot', botFallbackSeconds: 120 } }] }),
      example: { routing: routingPatch.parse({ firstResponder: 'agents', autoAssign: { enabled: true, capacity: 5 } }) },
      responses: {
        200: { description: 'the channel', schema: channelView },
        404: { description: 'no such channel in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: await channels.update(principal.organizationId, params.channelId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/channels/:channelId/templates',
      operationId: 'listTemplates',
      summary: 'The approved and pending templates of a chat channel, with the variables each expects',
      tag: 'Channels',
      auth: 'apiKey',
      params: z.object({ channelId: z.string().min(1).max(128) }),
      responses: { 200: { description: 'templates', schema: z.object({ templates: z.array(templateView) }) }, 404: { description: 'no such channel in the organization', schema: errorSchema }, 422: { description: 'not_a_chat_channel: the channel is not a chat-network channel (web chat has no templates)', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: { templates: await channels.listTemplates(principal.organizationId, params.channelId) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/channels/:channelId/media/:mediaId',
      operationId: 'getMedia',
      summary: "A photo, video, voice note or document a customer sent: the file, fetched from the chat network with the channel's token (a web chat's files, a visitor's or an agent's, from this service's own store)",
      tag: 'Channels',
      auth: 'apiKey',
      scope: 'inbox:read',
      params: z.object({ channelId: z.string().min(1).max(128), mediaId: z.string().regex(/^[0-9A-Za-z_.-]{1,128}$/).describe("the `mediaId` of a received message's content") }),
      responses: {
        200: { description: 'the file, with its content type', file: true },
        404: { description: 'no such channel in the organization, or no such media on its number (media expire on the network after 30 days) or in its web chat', schema: errorSchema },
        422: { description: '`not_a_chat_channel`, or `media_too_large` (over 16 MiB)', schema: errorSchema },
        502: { description: 'the chat network refused the request', schema: errorSchema },
        503: { description: 'the chat network did not answer; retry after Retry-After', schema: errorSchema },
      },
      handler: async ({ principal, params }) => {
        const file = await channels.media(principal.organizationId, params.channelId, params.mediaId);
        const headers = mediaHeaders(file.mimeType);
        return { body: file.bytes, headers: file.filename === undefined ? headers : { ...headers, 'content-disposition': dispositionOf(file.mimeType, file.filename) } };
      },
    }),
  ];
}

/** Types a browser may show inline; anything else is a download, and nothing from a customer is sniffed or scripted. */
const INLINE_MEDIA = /^(image\/(jpeg|png|webp)|video\/(mp4|3gpp)|audio\/(ogg|mpeg|mp4|aac|amr)|application\/pdf)$/;

/** `inline` for what a browser shows safely (pictures, PDF), else a download; with the file's name either way. */
export function dispositionOf(mimeType: string, filename: string): string {
  const kind = /^(image\/(png|jpeg|gif|webp)|application\/pdf)$/.test(mimeType) ? 'inline' : 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function mediaHeaders(mimeType: string): Record<string, string> {
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? mimeType.toLowerCase() : 'application/octet-stream';
  return {
    'content-type': type,
    'content-disposition': INLINE_MEDIA.test(type) ? 'inline' : 'attachment',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'private, max-age=3600',
  };
}
