import { z } from 'zod';
import { AppError, notFound } from '../../errors.js';
import { USER_ROLES } from '../../domain/types.js';
import { SCOPES, scopesForRole, type Scope } from '../../domain/scopes.js';
import { errorSchema, passwordSchema } from '../../app/schemas.js';
import type { AccountService, PublicApiKey, PublicUser } from '../../app/accounts.js';
import { createChannelBody, type ChannelService } from '../../messaging/index.js';
import { defineRoute, type RouteDef } from '../route.js';
import { channelView, createdChannelView, templateView } from './channels.js';

const settingsUser = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.enum(USER_ROLES),
  active: z.boolean().describe('false once deactivated: no sign-in, no sessions, their keys refused'),
  capacity: z
    .number()
    .int()
    .nullable()
    .describe("the most open conversations auto-assignment gives them (the smaller of this and the channel's or team's capacity applies); null: no limit of their own"),
  createdAt: z.string(),
});
const settingsKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe('the first characters of the key, to recognise it'),
  scopes: z.array(z.string()),
  userId: z.string().describe('the user the key acts as'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().describe('to the minute'),
  revokedAt: z.string().nullable(),
});
const creditEntry = z.object({
  at: z.string(),
  kind: z.enum(['top_up', 'charge', 'refund', 'release']).describe('top_up adds; charge takes a template send\'s price; refund (sent, then failed) and release (not sent) give it back'),
  amount: z.number().int().describe('signed: negative for a charge'),
  balance: z.number().int().describe('the balance right after'),
  reference: z.string().nullable().describe("the top-up's operationId or the send's reservation id"),
});

const text = (max: number) => z.string().trim().min(1).max(max);
const createUserBody = z
  .object({ email: z.email().max(320), name: text(200), role: z.enum(USER_ROLES), password: passwordSchema })
  .strict()
  .meta({ examples: [{ email: 'ann@acme.test', name: 'Ann', role: 'agent', password: 'a long password' }] });
const updateUserBody = z
  .object({
    name: text(200).optional(),
    role: z.enum(USER_ROLES).optional(),
    active: z.boolean().optional().describe('false deactivates: their sessions end at once, their keys stop working'),
    capacity: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .nullable()
      .optional()
      .describe("the most open (assigned, unresolved) conversations auto-assignment gives them, whatever the channel's or team's capacity allows; null: no limit of their own"),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, { message: 'send at least one of name, role, active, capacity' })
  .meta({ examples: [{ active: false }, { capacity: 3 }] });
const createKeyBody = z
  .object({
    name: text(200),
    scopes: z.array(z.enum(SCOPES)).min(1),
    userId: z.string().min(1).max(64).optional().describe('the user the key acts as; default: the caller'),
  })
  .strict()
  .meta({ examples: [{ name: 'CRM sync', scopes: ['tickets:read', 'tickets:create'] }] });
const idParams = z.object({ id: z.string().min(1).max(64) });

const userView = ({ id, email, name, role, active, capacity, createdAt }: PublicUser) => ({ id, email, name, role, active, capacity, createdAt });
const keyView = ({ id, name, prefix, scopes, userId, createdAt, lastUsedAt, revokedAt }: PublicApiKey) => ({ id, name, prefix, scopes, userId, createdAt, lastUsedAt, revokedAt });

/**
 * Settings for admins: users, API keys, channels, template sync and credits
 * of the caller's organization. Scope `settings:manage` (an admin's session has it,
 * an agent's does not).
 */
export function settingsRoutes(accounts: AccountService, channels: ChannelService): RouteDef[] {
  const base = { tag: 'Settings', auth: 'apiKey' as const, scope: 'settings:manage' as const };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/users',
      operationId: 'listUsers',
      summary: 'The dashboard users of the organization',
      responses: { 200: { description: 'users', schema: z.object({ success: z.literal(true), users: z.array(settingsUser) }) } },
      handler: async ({ principal }) => ({ body: { success: true, users: (await accounts.listUsers(principal.organizationId)).map(userView) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/users',
      operationId: 'createUser',
      example: { email: 'ben@acme.test', name: 'Ben Ortiz', role: 'agent', password: 'a long password' },
      summary: 'Create a dashboard user (an admin or an agent) with a first password',
      body: createUserBody,
      responses: {
        201: { description: 'the user', schema: z.object({ success: z.literal(true), user: settingsUser }) },
        409: { description: '`email_taken` in this organization', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: { success: true, user: userView(await accounts.createUser(principal.organizationId, body)) } }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/users/:id',
      operationId: 'updateUser',
      example: { role: 'admin' },
      summary: 'Rename a user, change their role, set their auto-assignment capacity, deactivate or reactivate them (deactivating ends their sessions and stops their keys)',
      params: idParams,
      body: updateUserBody,
      responses: {
        200: { description: 'the user', schema: z.object({ success: z.literal(true), user: settingsUser }) },
        404: { description: 'no such user in the organization', schema: errorSchema },
        409: { description: '`cannot_change_self`: nobody deactivates or demotes themselves', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({
        body: { success: true, user: userView(await accounts.updateUser(principal.organizationId, params.id, body, principal.userId)) },
      }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/api-keys',
      operationId: 'listApiKeys',
      summary: 'The API keys of the organization (never their text), with last use',
      responses: { 200: { description: 'keys', schema: z.object({ success: z.literal(true), apiKeys: z.array(settingsKey) }) } },
      handler: async ({ principal }) => ({ body: { success: true, apiKeys: (await accounts.listApiKeys(principal.organizationId)).map(keyView) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/api-keys',
      operationId: 'createApiKey',
      summary: 'Issue an API key; `secret` (the key itself) is in this answer only',
      body: createKeyBody,
      responses: {
        201: { description: 'the key and its secret', schema: z.object({ success: z.literal(true), apiKey: settingsKey, secret: z.string().describe('the key; shown only here') }) },
        400: { description: '`scope_not_allowed`: a scope the key\'s user (by role) or the caller may not hand out', schema: errorSchema },
        404: { description: 'no such (active) user in the organization', schema: errorSchema },
      },
      handler: async ({ principal, body }) => {
        const userId = body.userId ?? principal.userId;
        const owner = await accounts.getUser(principal.organizationId, userId).catch(() => null);
        if (owner === null || !owner.active) throw notFound('user');
        // A key never carries more than its user's role allows, nor more than the caller has.
        const allowed = new Set<Scope>(scopesForRole(owner.role).filter((s) => principal.scopes.has(s)));
        const refused = body.scopes.filter((s) => !allowed.has(s));
        if (refused.length > 0) {
          throw new AppError(400, 'scope_not_allowed', `a key of this user cannot carry: ${refused.join(', ')}`, { scopes: refused });
        }
        const { key, ...rec } = await accounts.createApiKey(principal.organizationId, { userId, name: body.name, scopes: body.scopes });
        return { status: 201, body: { success: true, apiKey: keyView(rec), secret: key } };
      },
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/api-keys/:id',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (at once, on every node)',
      params: idParams,
      responses: {
        200: { description: 'the revoked key', schema: z.object({ success: z.literal(true), apiKey: settingsKey }) },
        404: { description: 'no such key in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: { success: true, apiKey: keyView(await accounts.revokeApiKey(principal.organizationId, params.id)) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/channels',
      operationId: 'createChannel',
      summary: 'Create a channel: a WhatsApp number on the real network (its ids and secrets), one on the sandbox network (provisioned now), or a web chat',
      body: createChannelBody.meta({ examples: [{ kind: 'whatsapp_cloud', name: 'Support line', network: 'sandbox' }] }),
      responses: {
        201: { description: 'the channel (never its secrets; a generated verify token this once, with the webhook URL to give Meta), with the outcome of the first template sync', schema: createdChannelView },
        409: { description: '`phone_number_in_use` by another channel, or `sandbox_disabled`', schema: errorSchema },
        503: { description: 'clustered without SECRETS_KEY: chat-network credentials cannot be stored', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: await channels.create(principal.organizationId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/channels/:channelId/verify-token',
      operationId: 'rotateChannelVerifyToken',
      summary: "Generate a new webhook verify token for a WhatsApp channel on the real network, shown this once (the old one stops verifying)",
      params: z.object({ channelId: z.string().min(1).max(128) }),
      responses: {
        200: { description: 'the channel, with `webhook.url` and the new `webhook.verifyToken`', schema: channelView },
        404: { description: 'no such channel in the organization', schema: errorSchema },
        422: { description: '`not_a_chat_channel` (web chat), or `sandbox_channel`: the sandbox network subscribes its channels itself', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: await channels.newVerifyToken(principal.organizationId, params.channelId) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/channels/:channelId/templates/sync',
      operationId: 'syncTemplates',
      summary: "Sync a chat channel's templates from the network's template API",
      params: z.object({ channelId: z.string().min(1).max(128) }),
      responses: {
        200: {
          description: 'the registry after the sync',
          schema: z.object({ success: z.literal(true), synced: z.number().int(), removed: z.number().int(), templates: z.array(templateView) }),
        },
        404: { description: 'no such channel in the organization', schema: errorSchema },
        422: { description: '`not_a_chat_channel`: templates belong to chat-network (WhatsApp) channels', schema: errorSchema },
        502: { description: 'the network refused the request', schema: errorSchema },
        503: { description: 'the network is unreachable', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: { success: true, ...(await channels.syncTemplates(principal.organizationId, params.channelId)) } }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/credits',
      operationId: 'getCredits',
      summary: 'The credit balance, the price of a template send per category, and the latest 100 balance changes',
      responses: {
        200: {
          description: 'balance and history',
          schema: z.object({ success: z.literal(true), balance: z.number().int(), prices: z.record(z.string(), z.number()), history: z.array(creditEntry).describe('newest first') }),
        },
      },
      handler: async ({ principal }) => {
        const { balance, prices } = await channels.credits(principal.organizationId);
        return { body: { success: true, balance, prices, history: await channels.creditHistory(principal.organizationId) } };
      },
    }),
  ];
}
