import { createHash, randomBytes } from 'node:crypto';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import { escapeHtml, sandboxPage, type SandboxReply } from './google-errors.js';

/** The OAuth client this service is registered as at the sandbox identity provider. */
export const SANDBOX_CLIENT_ID = 'switchboard-sandbox.apps.sandbox.local';

interface PendingAuthorization {
  id: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string;
  codeChallenge: string;
  expiresAt: number;
}

interface AuthCode {
  code: string;
  email: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  codeChallenge: string;
  expiresAt: number;
}

interface Grant {
  refreshToken: string;
  email: string;
  scope: string;
  clientId: string;
  revoked: boolean;
}

interface AccessToken {
  email: string;
  scope: string;
  expiresAt: number;
  refreshToken: string;
}

/**
 * A loopback redirect (`http://127.0.0.1:<port>/…`, `http://[::1]:…`, `http://localhost:…`), which
 * Google accepts on any port for desktop clients: how a developer's own program on their machine
 * signs in to the sandbox with the sandbox client. Not on the port of a loopback origin of the
 * service itself (`serviceOrigins`): codes for the service go only to its registered URI.
 */
export function isLoopbackRedirect(uri: string, serviceOrigins: readonly string[] = []): boolean {
  const loopback = (u: URL) => ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname);
  try {
    const u = new URL(uri);
    if (u.protocol !== 'http:' || !loopback(u) || u.username !== '' || u.password !== '' || u.hash !== '') return false;
    // The service itself on this machine (under any loopback name) takes codes only at its registered URI.
    const port = (x: URL) => x.port || '80';
    return !serviceOrigins.map((o) => new URL(o)).some((o) => loopback(o) && port(o) === port(u));
  } catch {
    return false;
  }
}

const oauthError = (status: number, error: string, description: string): SandboxReply => ({ status, body: { error, error_description: description } });

/**
 * The sandbox identity provider: Google's OAuth 2.0 endpoints with their
 * shapes (authorization code + PKCE S256, offline access, refresh, revoke,
 * `invalid_grant`), and a consent page a person approves or denies.
 * Authorization codes are single use and live 5 minutes; access tokens live
 * `tokenTtlSeconds`; refresh tokens until revoked. Refresh tokens persist
 * in its db; access tokens are held in memory (after a restart the service
 * refreshes, as it would after expiry).
 *
 * Sandbox-only controls (for tests and demos): expire a user's access
 * tokens, revoke a user's grants, count refresh grants.
 */
export class SandboxIdentity {
  private readonly pending = new Map<string, PendingAuthorization>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly tokens = new Map<string, AccessToken>();
  /** refresh_token grants answered (sandbox statistics). */
  refreshGrants = 0;

  constructor(
    private readonly db: SandboxProviderRecords,
    readonly clientSecret: string,
    private readonly tokenTtlSeconds: number,
    private readonly onFirstSignIn: (email: string) => Promise<void>,
  ) {}

  /**
   * GET …/o/oauth2/v2/auth: checks the request, then shows the consent page.
   * `redirect_uri` must be one of `registeredRedirectUris` exactly, as
   * Google compares it, or a loopback address (any port, as for Google's
   * desktop clients): anything else gets the error page, never a redirect.
   */
  authorize(q: Record<string, unknown>, actionUrl: string, registeredRedirectUris: readonly string[], serviceOrigins: readonly string[] = []): SandboxReply {
    const s = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : '');
    if (s('client_id') !== SANDBOX_CLIENT_ID) return { status: 400, html: sandboxPage('Error 401: invalid_client', '<h1>Access blocked: invalid_client</h1><p>The OAuth client was not found.</p>') };
    if (!registeredRedirectUris.includes(s('redirect_uri')) && !isLoopbackRedirect(s('redirect_uri'), serviceOrigins)) {
      return { status: 400, html: sandboxPage('Error 400: redirect_uri_mismatch', '<h1>Error 400: redirect_uri_mismatch</h1><p>The redirect URI is missing or not registered for this client.</p>') };
    }
    const redirect = new URL(s('redirect_uri'));
    const back = (error: string, description: string): SandboxReply => {
      const u = new URL(redirect);
      u.searchParams.set('error', error);
      u.searchParams.set('error_description', description);
      if (s('state')) u.searchParams.set('state', s('state'));
      return { status: 302, redirect: u.toString() };
    };
    if (s('response_type') !== 'code') return back('unsupported_response_type', 'response_type must be code');
    if (s('scope') === '') return back('invalid_scope', 'Missing required parameter: scope');
    if (s('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(s('code_challenge'))) return back('invalid_request', 'PKCE with code_challenge_method S256 is required');
    const id = randomBytes(16).toString('base64url');
    this.pending.set(id, { id, clientId: SANDBOX_CLIENT_ID, redirectUri: s('redirect_uri'), scope: s('scope'), state: s('state'), codeChallenge: s('code_challenge'), expiresAt: Date.now() + 30 * 60_000 });
    const scopes = s('scope').split(' ').map((x) => `<li>${escapeHtml(x)}</li>`).join('');
    const hint = s('login_hint') || 'sandbox.user@example.com';
    return {
      status: 200,
      html: sandboxPage(
        'Sign in',
        `<h1>Sign in to continue to Switchboard</h1>
<form method="post" action="${escapeHtml(actionUrl)}">
<input type="hidden" name="request" value="${escapeHtml(id)}">
<label for="email">Email</label><input id="email" name="email" type="email" value="${escapeHtml(hint)}" required>
<p>Switchboard wants to access your sandbox account:</p><ul>${scopes}</ul>
<button class="primary" type="submit" name="decision" value="approve">Allow</button><button type="submit" name="decision" value="deny">Cancel</button>
</form>`,
      ),
    };
  }

  /** POST of the consent page: back to the client with a code, or with `error=access_denied`. */
  async decide(form: Record<string, unknown>): Promise<SandboxReply> {
    const p = this.pending.get(String(form.request ?? ''));
    if (p === undefined || p.expiresAt <= Date.now()) return { status: 400, html: sandboxPage('Expired', '<h1>This sign-in request expired</h1><p>Start again from the app.</p>') };
    this.pending.delete(p.id);
    const u = new URL(p.redirectUri);
    if (p.state) u.searchParams.set('state', p.state);
    if (form.decision !== 'approve') {
      u.searchParams.set('error', 'access_denied');
      return { status: 302, redirect: u.toString() };
    }
    const email = String(form.email ?? '').trim().toLowerCase();
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) return { status: 400, html: sandboxPage('Sign in', '<h1>Enter a valid email address</h1>') };
    // Once per user, also when two sign-ins race on two nodes.
    if (await this.db.putIfAbsent('sbUsers', email, { email, createdAt: new Date().toISOString() })) await this.onFirstSignIn(email);
    const code = `4/0${randomBytes(24).toString('base64url')}`;
    this.codes.set(code, { code, email, clientId: p.clientId, redirectUri: p.redirectUri, scope: p.scope, codeChallenge: p.codeChallenge, expiresAt: Date.now() + 5 * 60_000 });
    u.searchParams.set('code', code);
    u.searchParams.set('scope', p.scope);
    return { status: 302, redirect: u.toString() };
  }

  /** POST …/token: authorization_code (with PKCE) and refresh_token grants. */
  async token(form: Record<string, unknown>): Promise<SandboxReply> {
    const s = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : '');
    if (s('client_id') !== SANDBOX_CLIENT_ID || s('client_secret') !== this.clientSecret) return oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    if (s('grant_type') === 'authorization_code') {
      const c = this.codes.get(s('code'));
      if (c === undefined) return oauthError(400, 'invalid_grant', 'Malformed auth code.');
      this.codes.delete(c.code);
      if (c.expiresAt <= Date.now()) return oauthError(400, 'invalid_grant', 'Bad Request');
      if (c.redirectUri !== s('redirect_uri')) return oauthError(400, 'redirect_uri_mismatch', 'Bad Request');
      if (createHash('sha256').update(s('code_verifier')).digest('base64url') !== c.codeChallenge) return oauthError(400, 'invalid_grant', 'Invalid code verifier.');
      const refreshToken = `1//0${randomBytes(32).toString('base64url')}`;
      const grant: Grant = { refreshToken, email: c.email, scope: c.scope, clientId: c.clientId, revoked: false };
      await this.db.put('sbGrants', refreshToken, grant);
      return { status: 200, body: { ...this.issue(grant), refresh_token: refreshToken } };
    }
    if (s('grant_type') === 'refresh_token') {
      this.refreshGrants++;
      const g = await this.db.get<Grant>('sbGrants', s('refresh_token'));
      if (g === undefined || g.revoked) return oauthError(400, 'invalid_grant', 'Token has been expired or revoked.');
      return { status: 200, body: this.issue(g) };
    }
    return oauthError(400, 'unsupported_grant_type', 'Invalid grant_type: ' + s('grant_type'));
  }

  private issue(g: Grant): Record<string, unknown> {
    const accessToken = `ya29.sbx-${randomBytes(32).toString('base64url')}`;
    this.tokens.set(accessToken, { email: g.email, scope: g.scope, expiresAt: Date.now() + this.tokenTtlSeconds * 1000, refreshToken: g.refreshToken });
    return { access_token: accessToken, expires_in: this.tokenTtlSeconds, scope: g.scope, token_type: 'Bearer' };
  }

  /** POST …/revoke: an access token or a refresh token; a refresh token takes its access tokens with it. */
  async revoke(form: Record<string, unknown>): Promise<SandboxReply> {
    const token = typeof form.token === 'string' ? form.token : '';
    const g = await this.db.get<Grant>('sbGrants', token);
    const a = this.tokens.get(token);
    if (g === undefined && a === undefined) return oauthError(400, 'invalid_token', 'Token expired or revoked');
    const refresh = g?.refreshToken ?? a!.refreshToken;
    const grant = await this.db.get<Grant>('sbGrants', refresh);
    if (grant !== undefined) await this.db.put('sbGrants', refresh, { ...grant, revoked: true });
    for (const [k, t] of this.tokens) if (t.refreshToken === refresh) this.tokens.delete(k);
    return { status: 200, body: {} };
  }

  /** The user and scopes behind a bearer access token; null when unknown or expired. */
  authenticate(authorization: string | undefined, needScope: string): { email: string } | null | 'scope' {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    const t = m ? this.tokens.get(m[1]!) : undefined;
    if (t === undefined || t.expiresAt <= Date.now()) return null;
    if (!t.scope.split(' ').some((s) => s === needScope || s.startsWith(needScope))) return 'scope';
    return { email: t.email };
  }

  /** Sandbox control: the user's access tokens stop working now (as if they expired). */
  expireAccessTokens(email: string): number {
    let n = 0;
    for (const [k, t] of this.tokens) {
      if (t.email !== email) continue;
      this.tokens.set(k, { ...t, expiresAt: 0 });
      n++;
    }
    return n;
  }

  /** Sandbox control: the user revokes the app's access (refresh then fails with invalid_grant). */
  async revokeUser(email: string): Promise<number> {
    let n = 0;
    for (const [k, g] of await this.db.entries<Grant>('sbGrants')) {
      if (g.email === email && !g.revoked) {
        await this.db.put('sbGrants', k, { ...g, revoked: true });
        n++;
      }
    }
    for (const [k, t] of this.tokens) if (t.email === email) this.tokens.delete(k);
    return n;
  }

  /** Live grants of a user (sandbox statistics: a deleted tool leaves none). */
  async liveGrants(email: string): Promise<number> {
    return (await this.db.values<Grant>('sbGrants')).filter((g) => g.email === email && !g.revoked).length;
  }
}
