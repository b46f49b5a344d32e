import type { Request } from 'express';
import { z } from 'zod';
import { errorSchema } from '../app/schemas.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { bearerToken } from '../http/app.js';
import { updateWebChatBody, widgetSettingsSchema, type ChannelService } from '../messaging/channels.js';
import { channelView, dispositionOf, mediaHeaders } from '../http/routes/channels.js';
import { conversationId } from '../inbox/schemas.js';
import { ATTACHMENT_TYPES } from './attachments.js';
import type { VisitorHub, VisitorFrame, VisitorSubscriber } from './hub.js';
import type { VisitorAccess, WebChatService } from './service.js';

const channelParams = z.object({ channelId: z.string().min(1).max(128) });
const visitorMessage = z.object({
  id: z.string().describe('the message id (the same in history, on the socket and in webhooks)'),
  from: z.enum(['visitor', 'agent', 'bot', 'system']),
  type: z.string().describe('text for what visitors and agents write'),
  text: z.string(),
  at: z.string().describe('ISO 8601'),
  attachment: z
    .object({
      id: z.string().describe('fetch it from `…/attachments/{id}` with the visitor token').meta({ examples: ['wca_9f2c4e1a7b3d5f60812a4c6e8b0d2f41'] }),
      mimeType: z.string().meta({ examples: ['image/png'] }),
      filename: z.string().meta({ examples: ['broken-part.png'] }),
    })
    .optional()
    .describe('a picture or document the visitor or an agent sent'),
});
const widgetConfig = z.object({
  channelId: z.string(),
  name: z.string(),
  widget: widgetSettingsSchema,
  identityVerification: z.boolean().describe('whether signed-in users can be verified (the channel has an identity secret)'),
});
const startBody = z
  .object({
    token: z.string().max(200).optional().describe("the visitor token this browser holds (local storage): continues the same visitor"),
    userId: z.string().min(1).max(200).optional().describe("the business's own id of a signed-in user (with userHash)"),
    userHash: z.string().regex(/^[0-9a-fA-F]{64}$/, '64 hex digits').optional().describe("HMAC-SHA256 of userId with the channel's identity secret, hex, computed by the business's server"),
    name: z.string().trim().min(1).max(120).optional().describe('from the pre-chat form'),
    email: z.email().max(254).optional().describe('from the pre-chat form'),
  })
  .strict()
  .refine((b) => (b.userId === undefined) === (b.userHash === undefined), { message: 'userId and userHash go together', path: ['userHash'] });
const started = z.object({
  visitorId: z.string(),
  audienceExternalId: z.string().describe('the contact: `<visitor id>:<channel id>`'),
  token: z.string().describe('keep it (local storage) and send it as `Authorization: Bearer` on every visitor request'),
  verified: z.boolean(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  unreadCount: z.number().int(),
});
const sendBody = z
  .object({
    text: z.string().min(1).max(16_384).describe('the message; at most WEBCHAT_MAX_MESSAGE_CHARS characters once trimmed'),
    clientId: z.string().min(1).max(64).optional().describe('the browser\'s id of this message: a retry with the same one is sent once'),
  })
  .strict();
/** The JSON body's limit for a file of at most `maxBytes`: its base64 and the other fields (a larger file is 413 `payload_too_large`). */
const fileBodyLimit = (maxBytes: number) => Math.ceil((maxBytes * 4) / 3) + 16 * 1024;
/** A file in a JSON body: base64, at most `maxBytes` once decoded (past it, 413 `attachment_too_large`). */
const fileFields = (maxBytes: number) => ({
  data: z
    .base64()
    .min(1)
    .max(fileBodyLimit(maxBytes))
    .describe(`the file, base64 (at most WEBCHAT_MAX_ATTACHMENT_BYTES, ${maxBytes} bytes by default, once decoded); its type is read from its bytes: ${ATTACHMENT_TYPES.join(', ')}`),
  mimeType: z.string().min(3).max(127).optional().describe('the type the browser declares; refused (415 `attachment_type_mismatch`) when the bytes are another'),
  filename: z.string().min(1).max(240).optional().describe('shown to the other side and used for downloads (the type\'s extension is added when missing)'),
});
const PNG_EXAMPLE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const attachmentRefusals = {
  413: { description: '`attachment_too_large`, or `message_too_long` for the caption', schema: errorSchema },
  415: { description: '`unsupported_attachment_type`: the bytes are not a type a web chat takes; `attachment_type_mismatch`: they are not the declared type', schema: errorSchema },
};

const history = z.object({ messages: z.array(visitorMessage), unreadCount: z.number().int() });

/**
 * Where a visitor request comes from: its Origin header. A browser leaves it
 * out of a same-origin GET, which it marks `Sec-Fetch-Site: same-origin`
 * instead: a page of this service's own origin (the simulator's test page),
 * still checked against the channel's allowed origins.
 */
const originOf = (req: Request): string | undefined => {
  if (typeof req.headers.origin === 'string') return req.headers.origin;
  const host = req.get('host');
  return req.headers['sec-fetch-site'] === 'same-origin' && host !== undefined ? `${req.protocol}://${host}` : undefined;
};

const refusals = {
  401: { description: '`invalid_visitor_token`: missing, unknown or revoked visitor token', schema: errorSchema },
  403: { description: '`origin_not_allowed`: the request\'s Origin is not an allowed origin of the channel', schema: errorSchema },
  404: { description: 'no web chat channel with this id', schema: errorSchema },
  429: { description: '`rate_limited`: too many requests from this address (or messages from this visitor); retry after Retry-After', schema: errorSchema },
};

/**
 * The visitor's endpoints, under `/webchat/v1` (not the agents' API): called
 * by the widget from the business's pages. Each checks the Origin against
 * the channel's allowed origins and counts the address; all but the start
 * need the visitor's token. A visitor token authenticates nothing else.
 */
export function visitorRoutes(service: WebChatService, hub: VisitorHub): RouteDef[] {
  const base = { tag: 'Web chat (visitors)', auth: 'none' as const, params: channelParams };
  const visitor = async (channelId: string, req: Request): Promise<VisitorAccess> => {
    const channel = await service.channelFor(channelId, originOf(req));
    await service.countAddress(req.ip);
    return service.authenticate(channel, bearerToken(req));
  };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/webchat/v1/channels/:channelId/config',
      operationId: 'webChatConfig',
      summary: "The widget's settings (title, greeting, colour, position, pre-chat form), for a page of an allowed origin",
      responses: { 200: { description: 'the settings', schema: widgetConfig }, 403: refusals[403], 404: refusals[404], 429: refusals[429] },
      handler: async ({ params, req }) => {
        const channel = await service.channelFor(params.channelId, originOf(req));
        await service.countAddress(req.ip);
        return { body: service.widgetConfig(channel) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/webchat/v1/channels/:channelId/visitors',
      operationId: 'webChatStartVisitor',
      summary: "Start or continue a visitor: the token this browser holds, a signed-in user's id with its HMAC, or a new anonymous visitor",
      body: startBody,
      example: { name: 'Ann Lee', email: 'ann@example.com' },
      responses: {
        201: { description: 'the visitor and a token to keep (the same token when the one sent is still good)', schema: started },
        401: { description: '`identity_not_verified`: userHash is not the HMAC of userId with the channel\'s identity secret', schema: errorSchema },
        403: refusals[403],
        404: refusals[404],
        422: { description: '`identity_verification_unavailable`: the channel has no identity secret', schema: errorSchema },
        429: refusals[429],
      },
      handler: async ({ params, body, req }) => {
        const channel = await service.channelFor(params.channelId, originOf(req));
        await service.countAddress(req.ip);
        const r = await service.start(channel, body);
        return {
          status: 201,
          body: { visitorId: r.visitor.id, audienceExternalId: `${r.visitor.id}:${channel.id}`, token: r.token, verified: r.verified, name: r.visitor.name, email: r.visitor.email, unreadCount: r.unreadCount },
        };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/webchat/v1/channels/:channelId/messages',
      operationId: 'webChatHistory',
      summary: "The visitor's conversation (its latest session, oldest first) and how many agent messages they have not seen",
      responses: { 200: { description: 'the messages', schema: history }, ...refusals },
      handler: async ({ params, req }) => ({ body: await service.history(await visitor(params.channelId, req)) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/webchat/v1/channels/:channelId/messages',
      operationId: 'webChatSend',
      summary: 'Send a message as the visitor (the fallback when the socket cannot open)',
      body: sendBody,
      example: { text: 'Hi, where is my order?', clientId: 'c1' },
      responses: {
        201: { description: 'the message as stored', schema: z.object({ message: visitorMessage }) },
        ...refusals,
        413: { description: '`message_too_long`', schema: errorSchema },
      },
      handler: async ({ params, body, req }) => ({ status: 201, body: { message: await service.send(await visitor(params.channelId, req), body.text, body.clientId) } }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/webchat/v1/channels/:channelId/poll',
      operationId: 'webChatPoll',
      summary: 'Long poll (the fallback when WebSockets are blocked): the messages after `after`, answered as soon as there are any, or after `wait` seconds',
      query: z.object({
        after: z.string().min(1).max(200).optional().describe('the id of the last message the widget has'),
        wait: z.coerce.number().int().min(0).max(25).default(25).describe('seconds to wait for a message (at most 25)'),
      }),
      responses: { 200: { description: 'new messages (maybe none), and whether an agent was typing meanwhile', schema: history.extend({ typing: z.boolean() }) }, ...refusals },
      handler: async ({ params, query, req, res }) => {
        const access = await visitor(params.channelId, req);
        let typing = false;
        let wake: () => void = () => {};
        const woken = new Promise<void>((r) => (wake = r));
        const sub: VisitorSubscriber = {
          organizationId: access.channel.organizationId,
          audienceExternalId: access.audienceExternalId,
          channelId: access.channel.id,
          frame: (f: VisitorFrame) => {
            if (f.type === 'typing') typing = true;
            wake();
          },
          revoked: wake,
        };
        // Listening before reading: a message recorded in between still wakes the poll.
        hub.add(sub);
        const closed = () => wake();
        res.once('close', closed);
        try {
          const first = await service.since(access, query.after);
          if (first.messages.length > 0 || query.wait === 0) return { body: { ...first, typing } };
          const timer = setTimeout(wake, query.wait * 1000);
          await woken;
          clearTimeout(timer);
          return { body: { ...(await service.since(access, query.after)), typing } };
        } finally {
          hub.remove(sub);
          res.off('close', closed);
        }
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/webchat/v1/channels/:channelId/attachments',
      operationId: 'webChatSendAttachment',
      summary: 'Send a picture or a document as the visitor (checked by its content, stored, shown to the agents in the thread)',
      body: z
        .object({
          ...fileFields(service.maxAttachmentBytes),
          caption: z.string().min(1).max(4096).optional().describe('text sent with the file'),
          clientId: z.string().min(1).max(64).optional().describe("the browser's id of this message: a retry with the same one is sent (and stored) once"),
        })
        .strict(),
      bodyLimit: fileBodyLimit(service.maxAttachmentBytes),
      example: { data: PNG_EXAMPLE, mimeType: 'image/png', filename: 'broken-part.png', caption: 'This part came broken', clientId: 'f1' },
      responses: { 201: { description: 'the message as stored, with its attachment', schema: z.object({ message: visitorMessage }) }, ...refusals, ...attachmentRefusals },
      handler: async ({ params, body, req }) => {
        const a = await visitor(params.channelId, req);
        const m = await service.sendAttachment(a, { bytes: Buffer.from(body.data, 'base64'), mimeType: body.mimeType, filename: body.filename }, body.caption, body.clientId);
        return { status: 201, body: { message: m } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/webchat/v1/channels/:channelId/attachments/:attachmentId',
      operationId: 'webChatGetAttachment',
      summary: "A file of the visitor's own conversation (theirs or an agent's); any other visitor's is not found",
      params: channelParams.extend({ attachmentId: z.string().min(1).max(64).describe("a message's `attachment.id`") }),
      responses: { 200: { description: 'the file, with its content type', file: true }, ...refusals, 404: { description: 'no web chat channel with this id, or no such file in this visitor\'s conversation', schema: errorSchema } },
      handler: async ({ params, req }) => {
        const found = await service.attachmentForVisitor(await visitor(params.channelId, req), params.attachmentId);
        return { body: found.bytes, headers: { ...mediaHeaders(found.attachment.mimeType), 'content-disposition': dispositionOf(found.attachment.mimeType, found.attachment.filename) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/webchat/v1/channels/:channelId/typing',
      operationId: 'webChatTyping',
      summary: 'The visitor is typing: relayed to the agents (not stored)',
      responses: { 204: { description: 'relayed' }, ...refusals },
      handler: async ({ params, req }) => {
        const a = await visitor(params.channelId, req);
        hub.visitorTyping(a.channel.organizationId, a.audienceExternalId);
        return { status: 204 };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/webchat/v1/channels/:channelId/read',
      operationId: 'webChatRead',
      summary: 'The visitor has seen every message so far: the unread count starts again from zero',
      responses: { 200: { description: 'read', schema: z.object({ unreadCount: z.literal(0) }) }, ...refusals },
      handler: async ({ params, req }) => {
        await service.markRead(await visitor(params.channelId, req));
        return { body: { unreadCount: 0 as const } };
      },
    }),
  ];
}

/**
 * What agents do with a web chat's files from the inbox: upload one for a
 * visitor's conversation, then send it with the ordinary reply (`media`,
 * naming it by `mediaId`). Agents read every file of the organization's web
 * chats at `GET /v1/channels/{channelId}/media/{mediaId}`, as they read a
 * chat network's.
 */
export function webChatAgentRoutes(service: WebChatService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/attachments',
      operationId: 'uploadWebChatAttachment',
      summary: "Upload a picture or document for a web chat visitor's conversation; send it with POST /v1/conversations/{id}/reply (`media` with its `mediaId`)",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: z.object({ id: conversationId }),
      body: z.object(fileFields(service.maxAttachmentBytes)).strict(),
      bodyLimit: fileBodyLimit(service.maxAttachmentBytes),
      example: { data: PNG_EXAMPLE, mimeType: 'image/png', filename: 'label.png' },
      responses: {
        201: {
          description: 'stored: reply with `{"type":"media","media":{"type":<type>,<type>:{"mediaId":<mediaId>}}}`',
          schema: z.object({
            mediaId: z.string().meta({ examples: ['wca_9f2c4e1a7b3d5f60812a4c6e8b0d2f41'] }),
            type: z.enum(['image', 'document']).describe('the media type to reply with'),
            mimeType: z.string().describe('as read from the bytes').meta({ examples: ['image/png'] }),
            filename: z.string().meta({ examples: ['label.png'] }),
            size: z.number().int(),
          }),
        },
        404: { description: "no such web chat conversation in the organization (a chat network's conversation takes media by link or the network's media id)", schema: errorSchema },
        ...attachmentRefusals,
      },
      handler: async ({ principal, params, body }) => {
        const r = await service.uploadForAgent(principal.organizationId, params.id, { bytes: Buffer.from(body.data, 'base64'), mimeType: body.mimeType, filename: body.filename });
        return { status: 201, body: { mediaId: r.id, type: r.mimeType.startsWith('image/') ? ('image' as const) : ('document' as const), mimeType: r.mimeType, filename: r.filename, size: r.size } };
      },
    }),
  ];
}

/** The channel admin's web chat settings (the agents' API, `settings:manage`). */
export function webChatSettingsRoutes(channels: ChannelService, service: WebChatService): RouteDef[] {
  const base = { tag: 'Settings', auth: 'apiKey' as const, scope: 'settings:manage' as const };
  return [
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/channels/:channelId/web-chat',
      operationId: 'updateWebChat',
      summary: "A web chat's allowed origins and widget settings (colour, title, greeting, position, pre-chat form)",
      params: channelParams,
      body: updateWebChatBody,
      example: { allowedOrigins: ['https://shop.example'], widget: { color: '#0b6bcb', title: 'Chat with Acme', greeting: 'Hi! How can we help?', position: 'right', preChatForm: false } },
      responses: {
        200: { description: 'the channel', schema: channelView },
        404: { description: 'no such channel in the organization', schema: errorSchema },
        422: { description: '`not_a_web_chat`', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: await channels.updateWebChat(principal.organizationId, params.channelId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/channels/:channelId/identity-secret',
      operationId: 'rotateWebChatIdentitySecret',
      summary: "A new identity secret for a web chat, shown this once (hashes made with the old one stop verifying)",
      params: channelParams,
      responses: {
        200: { description: 'the channel with `identitySecret`', schema: channelView },
        404: { description: 'no such channel in the organization', schema: errorSchema },
        422: { description: '`not_a_web_chat`', schema: errorSchema },
        503: { description: 'clustered without SECRETS_KEY: the secret cannot be stored', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: await channels.rotateIdentitySecret(principal.organizationId, params.channelId) }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/channels/:channelId/visitors/:visitorId/tokens',
      operationId: 'revokeWebChatVisitor',
      summary: "Revoke a web chat visitor's tokens: their sockets close and their browser starts over as a new visitor",
      params: channelParams.extend({ visitorId: z.string().regex(/^v_[0-9a-f]{24}$/, 'a visitor id, v_ and 24 hex digits') }),
      responses: {
        200: { description: 'how many tokens were revoked', schema: z.object({ revoked: z.number().int() }) },
        404: { description: 'no such web chat channel or visitor in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: await service.revokeVisitor(principal.organizationId, params.channelId, params.visitorId) }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/channels/:channelId/visitor-tokens',
      operationId: 'revokeWebChatTokens',
      summary: 'Revoke every visitor token of a web chat',
      params: channelParams,
      responses: {
        200: { description: 'how many tokens were revoked', schema: z.object({ revoked: z.number().int() }) },
        404: { description: 'no such web chat channel in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: await service.revokeChannel(principal.organizationId, params.channelId) }),
    }),
  ];
}
