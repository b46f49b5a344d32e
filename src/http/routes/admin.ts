import { z } from 'zod';
import type { AccountService } from '../../app/accounts.js';
import {
  apiKeySchema,
  contactSchema,
  createApiKeyBody,
  createContactBody,
  createdApiKeySchema,
  createOrganizationBody,
  createUserBody,
  keyParams,
  organizationSchema,
  orgParams,
  userSchema,
} from '../../app/schemas.js';
import { defineRoute, type RouteDef } from '../route.js';

/** The operator API: guarded by the operator token, used by `npm run admin`. */
export function adminRoutes(accounts: AccountService): RouteDef[] {
  const base = { tag: 'Operator', auth: 'operator' as const };
  return [
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations',
      summary: 'Create an organization',
      body: createOrganizationBody,
      responses: { 201: { description: 'the organization', schema: organizationSchema } },
      handler: async ({ body }) => ({ status: 201, body: await accounts.createOrganization(body.name) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations',
      summary: 'List organizations',
      responses: { 200: { description: 'organizations', schema: z.object({ organizations: z.array(organizationSchema) }) } },
      handler: async () => ({ body: { organizations: await accounts.listOrganizations() } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/users',
      summary: 'Create a dashboard user',
      params: orgParams,
      body: createUserBody,
      responses: { 201: { description: 'the user', schema: userSchema }, 409: { description: 'email taken in the organization' } },
      handler: async ({ params, body }) => ({ status: 201, body: await accounts.createUser(params.orgId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/users',
      summary: 'List dashboard users',
      params: orgParams,
      responses: { 200: { description: 'users', schema: z.object({ users: z.array(userSchema) }) } },
      handler: async ({ params }) => ({ body: { users: await accounts.listUsers(params.orgId) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/api-keys',
      summary: 'Issue an API key (the key text is shown only in this response)',
      params: orgParams,
      body: createApiKeyBody,
      responses: { 201: { description: 'the key, with its text', schema: createdApiKeySchema } },
      handler: async ({ params, body }) => ({ status: 201, body: await accounts.createApiKey(params.orgId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/api-keys',
      summary: 'List API keys (without their text)',
      params: orgParams,
      responses: { 200: { description: 'keys', schema: z.object({ apiKeys: z.array(apiKeySchema) }) } },
      handler: async ({ params }) => ({ body: { apiKeys: await accounts.listApiKeys(params.orgId) } }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/admin/v1/organizations/:orgId/api-keys/:keyId',
      summary: 'Revoke an API key',
      params: keyParams,
      responses: { 200: { description: 'the revoked key', schema: apiKeySchema } },
      handler: async ({ params }) => ({ body: await accounts.revokeApiKey(params.orgId, params.keyId) }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/admin/v1/organizations/:orgId/contacts',
      summary: 'Create a contact (idempotent on audienceExternalId)',
      params: orgParams,
      body: createContactBody,
      responses: { 201: { description: 'the contact', schema: contactSchema } },
      handler: async ({ params, body }) => ({ status: 201, body: await accounts.createContact(params.orgId, body) }),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/admin/v1/organizations/:orgId/contacts',
      summary: 'List contacts',
      params: orgParams,
      responses: { 200: { description: 'contacts', schema: z.object({ contacts: z.array(contactSchema) }) } },
      handler: async ({ params }) => ({ body: { contacts: await accounts.listContacts(params.orgId) } }),
    }),
  ];
}
