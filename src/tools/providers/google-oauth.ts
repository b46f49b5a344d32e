import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../errors.js';
import { ProviderHttp, ProviderUnauthorized, providerMessage } from './http.js';

/** Where Google's OAuth 2.0 endpoints are (the real ones, or the sandbox identity provider's). */
export interface GoogleOAuthEndpoints {
  authUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  clientId: string;
  clientSecret: string;
}

/** A token endpoint answer (RFC 6749 §5.1). `refresh_token` comes with the first exchange (offline access) and seldom after. */
export interface TokenAnswer {
  accessToken: string;
  refreshToken: string | null;
  expiresInSeconds: number;
  scope: string;
}

/** PKCE (RFC 7636): a verifier of 43 URL-safe characters and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * The token endpoint refused the grant (`invalid_grant`: the refresh token
 * was revoked or expired, or the code was used or is stale). Only this means
 * the user must sign in again; any other failure is temporary.
 */
export class InvalidGrant extends Error {
  constructor(readonly description: string) {
    super(`invalid_grant: ${description}`);
    this.name = 'InvalidGrant';
  }
}

/** Google's OAuth 2.0 for installed/web server apps: authorization code + PKCE, refresh, revoke. */
export class GoogleOAuthClient {
  private readonly http: ProviderHttp;
  constructor(
    private readonly endpoints: () => GoogleOAuthEndpoints,
    timeoutMs: number,
  ) {
    this.http = new ProviderHttp('Google sign-in', timeoutMs);
  }

  /** The consent URL: offline access (a refresh token), consent shown so that one is issued again on reconnect. */
  authorizeUrl(p: { redirectUri: string; scopes: string[]; state: string; codeChallenge: string; loginHint?: string }): string {
    const e = this.endpoints();
    const u = new URL(e.authUrl);
    u.searchParams.set('client_id', e.clientId);
    u.searchParams.set('redirect_uri', p.redirectUri);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('scope', p.scopes.join(' '));
    u.searchParams.set('state', p.state);
    u.searchParams.set('code_challenge', p.codeChallenge);
    u.searchParams.set('code_challenge_method', 'S256');
    u.searchParams.set('access_type', 'offline');
    u.searchParams.set('prompt', 'consent');
    u.searchParams.set('include_granted_scopes', 'true');
    return u.toString();
  }

  exchangeCode(code: string, codeVerifier: string, redirectUri: string): Promise<TokenAnswer> {
    return this.token(new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUri }));
  }

  refresh(refreshToken: string): Promise<TokenAnswer> {
    return this.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }));
  }

  /** Revokes the grant (a refresh token revokes the access tokens issued with it). An already invalid token counts as revoked. */
  async revoke(token: string): Promise<void> {
    try {
      await this.http.send(this.endpoints().revokeUrl, { method: 'POST', form: new URLSearchParams({ token }) });
    } catch (err) {
      if (err instanceof AppError && err.code === 'provider_rejected') return;
      throw err;
    }
  }

  private async token(form: URLSearchParams): Promise<TokenAnswer> {
    const e = this.endpoints();
    form.set('client_id', e.clientId);
    form.set('client_secret', e.clientSecret);
    let json: unknown;
    try {
      json = (await this.http.send(e.tokenUrl, { method: 'POST', form })).json;
    } catch (err) {
      // The token endpoint answers invalid_grant with 400 (Google) and some servers with 401.
      if (err instanceof AppError && err.code === 'provider_rejected' && (err.details as { providerCode?: string } | undefined)?.providerCode === 'invalid_grant') throw new InvalidGrant(err.message);
      if (err instanceof ProviderUnauthorized) throw new AppError(503, 'provider_unavailable', 'Google sign-in refused this service\'s OAuth client (check GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET)');
      throw err;
    }
    const o = (json ?? {}) as Record<string, unknown>;
    if (typeof o.access_token !== 'string' || o.access_token === '') {
      throw new AppError(503, 'provider_bad_response', `Google sign-in answered without an access token: ${providerMessage(json) ?? 'no details'}`, undefined, { retryAfterSeconds: 10 });
    }
    return {
      accessToken: o.access_token,
      refreshToken: typeof o.refresh_token === 'string' ? o.refresh_token : null,
      expiresInSeconds: typeof o.expires_in === 'number' ? o.expires_in : 3600,
      scope: typeof o.scope === 'string' ? o.scope : '',
    };
  }
}
