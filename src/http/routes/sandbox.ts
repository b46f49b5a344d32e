import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { phoneDigits } from '../../messaging/index.js';
import type { SandboxCustomer } from '../../messaging/sandbox-customer.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';
import { CUSTOMER_MEDIA_TYPES, SANDBOX_MEDIA_MAX_BYTES } from '../../network/sandbox/index.js';

const params = z.object({ channelId: z.string().min(1).max(128), phone: phoneDigits });
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
      method: 'get',
      path: '/v1/sandbox/channels/:channelId/customers/:phone/messages',
      operationId: 'sandboxListCustomerMessages',
      summary: "Sandbox: the customer's phone — the conversation with the business number, oldest first",
      responses: { 200: { description: 'messages both ways, with their buttons and statuses', schema: z.object({ messages: z.array(z.unknown()) }) }, ...errors },
      handler: async ({ principal, params: p }) => ({ body: { messages: await customer.phone(principal, p.channelId, p.phone) } }),
    }),
  ];
}
