import { z } from 'zod';
import { USER_ROLES } from '../../domain/types.js';
import { errorSchema, passwordSchema } from '../../app/schemas.js';
import type { AuthSessions } from '../../auth/index.js';
import { defineRoute, type RouteDef } from '../route.js';

export const sessionUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.enum(USER_ROLES),
  organizationId: z.string(),
});

const sessionViewSchema = z.object({
  success: z.literal(true),
  user: sessionUserSchema,
  csrfToken: z.string().describe('send it as the X-CSRF-Token header on every POST, PATCH, PUT and DELETE made with the session cookie'),
  expiresAt: z.string().describe('the absolute end of the session (it also ends after 12 h without requests)'),
});

const loginBody = z
  .object({
    email: z.string().trim().min(1).max(320),
    password: z.string().min(1).max(200),
    organizationId: z.string().min(1).max(64).optional().describe('only needed when the email and password fit users of several organizations (409 ambiguous_login)'),
  })
  .strict()
  .meta({ examples: [{ email: 'admin@demo.local', password: 'the password from the first-start banner' }] });

const passwordBody = z
  .object({
    currentPassword: z.string().min(1).max(200),
    newPassword: passwordSchema,
  })
  .strict();

const noStore = { 'Cache-Control': 'no-store' };

/** Dashboard sign-in, sign-out, the current session, password change and inbox tokens. */
export function authRoutes(sessions: AuthSessions): RouteDef[] {
  const tag = 'Sign-in';
  return [
    defineRoute({
      method: 'post',
      path: '/v1/auth/login',
      operationId: 'login',
      summary: 'Sign in to the dashboard with email and password: sets the sb_session cookie and returns the CSRF token',
      tag,
      auth: 'none',
      body: loginBody,
      responses: {
        200: { description: 'signed in; `Set-Cookie: sb_session=…; HttpOnly; SameSite=Lax; Path=/` (+ `Secure` on https)', schema: sessionViewSchema },
        401: { description: '`invalid_credentials`: wrong email or password (the same answer for both)', schema: errorSchema },
        409: { description: '`ambiguous_login`: the email and password fit users of several organizations; `details.organizations` lists them, send `organizationId`', schema: errorSchema },
        429: { description: '`too_many_attempts`: too many failures for this account or address; see `Retry-After`', schema: errorSchema },
      },
      handler: async ({ body, req }) => {
        const { cookie, view } = await sessions.login(body, { address: req.ip, cookieHeader: req.headers.cookie });
        return { body: { success: true, ...view }, headers: { 'Set-Cookie': cookie, ...noStore } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/logout',
      operationId: 'logout',
      summary: 'Sign out: ends the session on every node and clears the cookie',
      tag,
      auth: 'session',
      responses: { 204: { description: 'signed out' }, 403: { description: '`csrf_failed`', schema: errorSchema } },
      handler: async ({ req }) => {
        await sessions.logout(req.headers.cookie);
        return { status: 204, headers: { 'Set-Cookie': sessions.clearedCookie(), ...noStore } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/auth/session',
      operationId: 'getSession',
      summary: 'The signed-in user, the CSRF token and when the session ends',
      tag,
      auth: 'session',
      responses: { 200: { description: 'signed in', schema: sessionViewSchema }, 401: { description: '`not_signed_in`', schema: errorSchema } },
      handler: ({ principal }) => ({ body: { success: true, ...sessions.view(sessions.sessionOf(principal)) }, headers: noStore }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/auth/password',
      operationId: 'changePassword',
      example: { currentPassword: 'the password you sign in with now', newPassword: 'a new long password' },
      summary: "Change the signed-in user's password; ends their other sessions",
      tag,
      auth: 'session',
      body: passwordBody,
      responses: {
        204: { description: 'changed' },
        400: { description: '`invalid_current_password`, or `validation_failed` (the new password has fewer than 12 characters)', schema: errorSchema },
        403: { description: '`csrf_failed`', schema: errorSchema },
        429: { description: '`too_many_attempts`', schema: errorSchema },
      },
      handler: async ({ principal, body, req }) => {
        await sessions.changePassword(sessions.sessionOf(principal), body.currentPassword, body.newPassword, req.ip);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/inbox/token',
      operationId: 'createInboxToken',
      summary: 'A single-use token (valid 60 s) to open the inbox WebSocket as /ws?token=…',
      tag,
      auth: 'session',
      responses: {
        200: { description: 'the token', schema: z.object({ success: z.literal(true), token: z.string(), expiresAt: z.string() }) },
        403: { description: '`csrf_failed`', schema: errorSchema },
      },
      handler: async ({ principal }) => ({ body: { success: true, ...(await sessions.issueInboxToken(sessions.sessionOf(principal))) }, headers: noStore }),
    }),
  ];
}
