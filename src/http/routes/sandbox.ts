import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { phoneDigits } from '../../messaging/index.js';
import type { SandboxCustomer } from '../../messaging/sandbox-customer.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';
import { bearerToken } from '../app.js';
import { AppError } from '../../errors.js';
import type { Principal } from '../../domain/types.js';
import { CUSTOMER_MEDIA_TYPES, SANDBOX_MEDIA_MAX_BYTES } from '../../network/sandbox/index.js';
import { CUSTOMER_ADDRESS_PATTERN } from '../../domain/contact-id.js';

/** A simulated customer: by phone number, or by the business-scoped user id of one made with `POST …/customers`. */
const customerRef = z
  .string()
  .regex(CUSTOMER_ADDRESS_PATTERN, "must be the customer's phone number (7 to 15 digits, no +) or their business-scoped user id, like US.13491208655302741918");
const params = z.object({ channelId: z.string().min(1).max(128), phone: customerRef });
const profileName = z.string().trim().min(1).max(100).optional().describe("the customer's WhatsApp profile name");
const actionResult = z.object({
  messageId: z.string().describe("the network id of the customer's message"),
  delivered: z.boolean().describe("true when the service's webhook receiver took it at the first attempt (otherwise it is redelivered)"),
});
const errors = {
  400: { description: 'invalid body, no such button on that message, or a file the network would not take', schema: errorSchema },
  404: { description: 'no such channel in the organization, or no such message on this phone', schema: errorSchema },
  409: { description: 'not_a_sandbox_channel: the channel is not on the sandbox network', schema: errorSchema },
};

/** Playing the customer of a sandbox channel (embedded mode, or SANDBOX_NETWORK=true). */
export function sandboxRoutes(customer: SandboxCustomer): RouteDef[] {
  const base = { tag: 'Sandbox network', auth: 'apiKey' as const, scope: 'message:send' as const, params };
  return [
    defineRoute({
      tag: 'Sandbox network',
      auth: 'apiKey',
      scope: 'message:send',
      params: z.object({ channelId: z.string().min(1).max(128) }),
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers',
      operationId: 'sandboxCreateCustomer',
      example: { username: 'ann.lee', hidePhone: true, profileName: 'Ann Lee' },
      summary: 'Sandbox: a customer who adopts a WhatsApp username and may hide their number (they write through /customers/{userId}/…)',
      body: z
        .object({
          phone: phoneDigits.optional().describe("the customer's number, if they have one here (the business sees it only while hidePhone is false)"),
          username: z.string().trim().min(1).max(35).describe('the WhatsApp username they go by'),
          hidePhone: z.boolean().describe('hide the number: their webhooks carry the BSUID and the username, no phone'),
          profileName,
        })
        .strict(),
      responses: {
        201: {
          description: 'the customer, with the business-scoped user id the sandbox network gave them on this business account',
          schema: z.object({ customer: z.object({ userId: z.string(), username: z.string().nullable(), phone: z.string().nullable(), hidePhone: z.boolean() }) }),
        },
        ...errors,
      },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.createCustomer(principal, p.channelId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/messages',
      operationId: 'sandboxSendCustomerMessage',
      example: { text: 'Hi, my order #1042 arrived damaged.', profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer sends a text message to the business',
      body: z.object({ text: z.string().min(1).max(4096), profileName }),
      responses: { 201: { description: 'sent by the simulated customer', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.sendText(principal, p.channelId, p.phone, body.text, body.profileName) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/media',
      operationId: 'sandboxSendCustomerMedia',
      summary: 'Sandbox: the customer sends a photo, video, voice note or document (the webhook carries its media id, as on the real network)',
      body: z
        .object({
          kind: z.enum(['image', 'video', 'audio', 'document']),
          mimeType: z.string().min(3).max(127).describe(`one the network takes for the kind: ${Object.entries(CUSTOMER_MEDIA_TYPES).map(([k, v]) => `${k}: ${v.join(', ')}`).join('; ')}`),
          data: z.base64().max(Math.ceil((SANDBOX_MEDIA_MAX_BYTES * 4) / 3) + 4).describe(`the file, base64 (up to ${SANDBOX_MEDIA_MAX_BYTES / 1024} KiB in the sandbox)`),
          caption: z.string().min(1).max(1024).optional().describe('not for audio'),
          filename: z.string().min(1).max(240).optional().describe('documents only'),
          profileName,
        })
        .strict()
        .meta({ examples: [{ kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', caption: 'the broken part' }] }),
      responses: { 201: { description: 'sent by the simulated customer', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => {
        const { data, profileName: name, ...file } = body;
        return { status: 201, body: await customer.sendMedia(principal, p.channelId, p.phone, { ...file, bytes: Buffer.from(data, 'base64') }, name) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/locations',
      operationId: 'sandboxShareCustomerLocation',
      example: { latitude: 52.5219, longitude: 13.4132, name: 'Home', address: 'Karl-Marx-Allee 1, Berlin', profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer shares a location (a pin, or a named place with its address)',
      body: z
        .object({ latitude: z.number().min(-90).max(90), longitude: z.number().min(-180).max(180), name: z.string().min(1).max(1000).optional(), address: z.string().min(1).max(1000).optional(), profileName })
        .strict(),
      responses: { 201: { description: 'sent by the simulated customer', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => {
        const { profileName: name, ...location } = body;
        return { status: 201, body: await customer.shareLocation(principal, p.channelId, p.phone, location, name) };
      },
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/contacts',
      operationId: 'sandboxShareCustomerContacts',
      example: { contacts: [{ name: { formatted_name: 'Ben Lee', first_name: 'Ben' }, phones: [{ phone: '+49 151 2345678', type: 'CELL', wa_id: '491512345678' }] }], profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer shares contact cards (the Cloud API card shape)',
      body: z
        .object({
          contacts: z
            .array(
              z
                .object({
                  name: z.object({ formatted_name: z.string().min(1).max(1000), first_name: z.string().max(1000).optional(), last_name: z.string().max(1000).optional() }).loose(),
                  phones: z.array(z.object({ phone: z.string().max(100).optional(), type: z.string().max(32).optional(), wa_id: z.string().max(32).optional() }).strict()).max(20).optional(),
                  emails: z.array(z.object({ email: z.string().max(320).optional(), type: z.string().max(32).optional() }).strict()).max(20).optional(),
                  org: z.object({ company: z.string().max(1000).optional(), department: z.string().max(1000).optional(), title: z.string().max(1000).optional() }).strict().optional(),
                  urls: z.array(z.object({ url: z.string().max(2000).optional(), type: z.string().max(32).optional() }).strict()).max(20).optional(),
                  birthday: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
                })
                .strict(),
            )
            .min(1)
            .max(20),
          profileName,
        })
        .strict(),
      responses: { 201: { description: 'sent by the simulated customer', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.shareContacts(principal, p.channelId, p.phone, body.contacts, body.profileName) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/reactions',
      operationId: 'sandboxCustomerReaction',
      example: { messageId: EXAMPLE_IDS.messageId, emoji: '👍', profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer reacts to a message of the conversation (an empty emoji takes the reaction back)',
      body: z.object({ messageId: z.string().min(1).max(256), emoji: z.string().max(16).regex(/^(|\p{Extended_Pictographic}.*|\p{Regional_Indicator}.*)$/u, 'one emoji, or empty to take the reaction back'), profileName }).strict(),
      responses: { 201: { description: 'sent by the simulated customer', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.react(principal, p.channelId, p.phone, body.messageId, body.emoji, body.profileName) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/button-replies',
      operationId: 'sandboxTapButton',
      example: { messageId: EXAMPLE_IDS.messageId, buttonId: 'arrived_ok', profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer taps a reply button of an interactive message they received',
      body: z.object({ messageId: z.string().min(1).max(256), buttonId: z.string().min(1).max(256), profileName }),
      responses: { 201: { description: 'tapped', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.tapButton(principal, p.channelId, p.phone, body.messageId, body.buttonId, body.profileName) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/quick-replies',
      operationId: 'sandboxTapQuickReply',
      example: { messageId: EXAMPLE_IDS.templateMessageId, index: 0, profileName: 'Ann Lee' },
      summary: 'Sandbox: the customer taps a quick-reply button of a template message they received',
      body: z.object({ messageId: z.string().min(1).max(256), index: z.number().int().min(0).max(9), profileName }),
      responses: { 201: { description: 'tapped', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.tapQuickReply(principal, p.channelId, p.phone, body.messageId, body.index, body.profileName) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/contact-shares',
      operationId: 'sandboxShareContactInfo',
      example: { messageId: EXAMPLE_IDS.messageId },
      summary: "Sandbox: the customer shares their phone number in answer to the business's contact-information request",
      body: z.object({ messageId: z.string().min(1).max(256).describe('the request they answer') }).strict(),
      responses: { 201: { description: 'shared', schema: actionResult }, ...errors },
      handler: async ({ principal, params: p, body }) => ({ status: 201, body: await customer.shareContactInfo(principal, p.channelId, p.phone, body.messageId) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/messages',
      operationId: 'sandboxListCustomerMessages',
      summary: "Sandbox: the customer's phone — the conversation with the business number, oldest first",
      responses: { 200: { description: 'messages both ways, with their buttons and statuses', schema: z.object({ messages: z.array(z.unknown()) }) }, ...errors },
      handler: async ({ principal, params: p }) => ({ body: { messages: await customer.phone(principal, p.channelId, p.phone) } }),
    }),
  ];
}

/** What `GET /sandbox` reads: the sandboxes' base URLs, and an organization's credentials for them. */
export interface SandboxDirectory {
  urls(): Record<'graph' | 'google' | 'googleOAuth' | 'stripe', string | null>;
  credentials(principal: Principal): Promise<unknown>;
  authenticate(key: string, address?: string): Promise<Principal>;
}

const baseUrl = (what: string) => z.string().nullable().describe(`${what} (null when that sandbox is off, or this node does not listen yet)`);
const directorySchema = z.object({
  graph: baseUrl("the sandbox chat network's Graph API: a Cloud API client's Graph base URL (paths /v27.0/{phone-number-id}/messages …)"),
  google: baseUrl("the sandbox Google APIs (Gmail v1, Calendar v3): googleapis' rootUrl"),
  googleOAuth: baseUrl("the sandbox Google OAuth 2.0 endpoints: /o/oauth2/v2/auth, /token, /revoke (google-auth-library's endpoints)"),
  stripe: baseUrl("the sandbox Stripe API: the stripe client's protocol, host and port"),
  credentials: z
    .object({
      googleOAuth: z.object({ clientId: z.string(), clientSecret: z.string(), redirectUris: z.array(z.string()), loopbackRedirectUris: z.string(), scopes: z.array(z.string()) }).optional(),
      stripe: z.object({ keyPrefix: z.string(), createAccount: z.object({ method: z.literal('POST'), url: z.string(), authorization: z.string(), body: z.string() }) }).optional(),
      graph: z.object({ apiVersion: z.string(), channels: z.array(z.object({ channelId: z.string(), name: z.string(), phoneNumberId: z.string(), businessAccountId: z.string(), accessToken: z.string() })) }).optional(),
    })
    .optional()
    .describe("with an API key: the sandbox OAuth client, how to get a sandbox Stripe key, and the Graph access token of each of the organization's sandbox channels"),
}).meta({
  examples: [
    {
      graph: 'http://localhost:12110',
      google: 'http://localhost:12120',
      googleOAuth: 'http://localhost:12121',
      stripe: 'http://localhost:12111',
      credentials: {
        googleOAuth: {
          clientId: 'switchboard-sandbox.apps.sandbox.local',
          clientSecret: 'Hn3vX0cY7qL2mB9sT4wK8pR1zD6fG5jA',
          redirectUris: ['http://localhost:3000/v1/tools/oauth/callback'],
          loopbackRedirectUris: 'any http://127.0.0.1:<port>/… or http://localhost:<port>/… (as Google allows for desktop clients)',
          scopes: ['https://www.googleapis.com/auth/gmail.modify', 'https://www.googleapis.com/auth/calendar'],
        },
        stripe: { keyPrefix: 'sk_test_sbx_', createAccount: { method: 'POST', url: 'http://localhost:3000/sandbox/providers/stripe/accounts', authorization: 'Bearer <an API key of your organization>', body: '{"name":"My Shop"} (optional): the answer carries api_key' } },
        graph: { apiVersion: 'v27.0', channels: [{ channelId: 'ch_01J9Z3Q4R5S6T7V8W9X0Y1Z2A3', name: 'Sandbox WhatsApp', phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: 'EAASBXq1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9' }] },
      },
    },
  ],
});

/** `GET /sandbox`: where the sandboxes answer (public), and with an API key the organization's credentials for them. */
export function sandboxDirectoryRoutes(dir: SandboxDirectory): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/sandbox',
      operationId: 'getSandboxes',
      tag: 'Sandbox network',
      auth: 'none',
      summary: "The sandboxes' base URLs (each at the root of an origin of its own, for the providers' official clients); with `Authorization: Bearer <API key>`, the credentials to use them",
      responses: {
        200: { description: 'base URLs, and credentials when an API key was given', schema: directorySchema },
        401: { description: 'an Authorization header that is not a valid API key', schema: errorSchema },
      },
      handler: async ({ req }) => {
        const key = bearerToken(req);
        if (req.headers.authorization !== undefined && key === undefined) throw new AppError(401, 'unauthorized', 'Authorization must be Bearer <API key>');
        const urls = dir.urls();
        if (key === undefined) return { body: urls };
        const principal = await dir.authenticate(key, req.ip);
        return { body: { ...urls, credentials: await dir.credentials(principal) } };
      },
    }),
  ];
}
