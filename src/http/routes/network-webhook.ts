import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import type { NetworkWebhookReceiver } from '../../messaging/index.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';

const channelParams = z.object({ channelId: z.string().min(1).max(128) });

/**
 * The chat network's webhook (the callback URL configured in Meta's app
 * dashboard, or the sandbox network's): subscription check and deliveries.
 */
export function networkWebhookRoutes(receiver: NetworkWebhookReceiver): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/webhooks/whatsapp/:channelId',
      operationId: 'verifyNetworkWebhook',
      summary: 'Webhook subscription check (hub.mode, hub.verify_token, hub.challenge): echoes the challenge',
      tag: 'Chat network',
      auth: 'none',
      params: channelParams,
      responses: { 200: { description: 'the challenge, as plain text' }, 403: { description: 'wrong verify token or mode', schema: errorSchema } },
      handler: async ({ params, req, res }) => {
        const challenge = await receiver.verify(params.channelId, req.query as Record<string, unknown>);
        res.type('text/plain').send(challenge);
        return { status: 200 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/whatsapp/:channelId',
      operationId: 'receiveNetworkWebhook',
      // What the network sends when the customer writes (signed with the channel's app secret).
      example: {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: EXAMPLE_IDS.businessAccountId,
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550104477', phone_number_id: EXAMPLE_IDS.phoneNumberId },
                  contacts: [{ profile: { name: 'Ann Lee' }, wa_id: EXAMPLE_IDS.customerPhone }],
                  messages: [{ from: EXAMPLE_IDS.customerPhone, id: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABIYFjNFQjBDMkE0RjE5QjdFMzY1QUQ5AA==', timestamp: '1767605400', type: 'text', text: { body: 'Hi, my order #1042 arrived damaged.' } }],
                },
              },
            ],
          },
        ],
      },
      summary: 'Webhook deliveries (messages and statuses), verified with X-Hub-Signature-256; 200 once recorded',
      tag: 'Chat network',
      auth: 'none',
      params: channelParams,
      // Parsed for the raw bytes; the receiver verifies them before reading anything.
      body: z.unknown(),
      keepsUnstorableText: true,
      responses: {
        200: { description: 'recorded (or already recorded)' },
        401: { description: 'missing or invalid X-Hub-Signature-256: nothing processed', schema: errorSchema },
        503: { description: 'not all events could be recorded: the network delivers again', schema: errorSchema },
      },
      handler: async ({ params, req }) => ({ body: await receiver.receive(params.channelId, req.rawBody, req.headers['x-hub-signature-256'] as string | undefined) }),
    }),
  ];
}
