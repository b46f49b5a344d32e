import { AppError } from '../../errors.js';

/** A provider's answer: status, parsed JSON (undefined for an empty body), and Retry-After in seconds when given. */
export interface ProviderAnswer {
  status: number;
  json: unknown;
  retryAfterSeconds: number | undefined;
}

export interface ProviderRequest {
  method: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded (OAuth token endpoints, Stripe). */
  form?: URLSearchParams;
}

/**
 * Thrown by `send` for a 401: the caller may refresh its credentials and try
 * once more; otherwise `asToolError` says what to do.
 */
export class ProviderUnauthorized extends Error {
  constructor(readonly provider: string) {
    super(`${provider} refused the credentials (401)`);
    this.name = 'ProviderUnauthorized';
  }
}

function retryAfter(h: string | null): number | undefined {
  if (h === null) return undefined;
  const n = Number(h);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The provider's own words for an error, from the Google (`error.message`) or Stripe (`error.message`) and OAuth (`error_description`) shapes. */
export function providerMessage(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const o = json as Record<string, unknown>;
  if (typeof o.error === 'object' && o.error !== null && typeof (o.error as Record<string, unknown>).message === 'string') return String((o.error as Record<string, unknown>).message).slice(0, 300);
  if (typeof o.error_description === 'string') return o.error_description.slice(0, 300);
  if (typeof o.error === 'string') return o.error.slice(0, 300);
  return undefined;
}

/** The provider's machine-readable error code: OAuth `error`, Stripe `error.code`, Google `error.status`. */
export function providerCode(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const e = (json as Record<string, unknown>).error;
  if (typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null) {
    const o = e as Record<string, unknown>;
    for (const k of ['code', 'status', 'type']) if (typeof o[k] === 'string') return o[k];
  }
  return undefined;
}

/**
 * One HTTP client per provider: JSON in and out (or a form), a time limit,
 * and every failure turned into an `AppError` a model can act on:
 * 429 → `provider_rate_limited` with the provider's Retry-After; 5xx,
 * timeouts and refused connections → `provider_unavailable` (503, retry
 * later); an answer that is not the JSON promised → `provider_bad_response`;
 * 404 → `not_found`; other 4xx → `provider_rejected` with the provider's
 * own message. A 401 is thrown as `ProviderUnauthorized` so the caller can
 * refresh and retry once. Nothing sent (tokens, keys) ever appears in an error.
 */
export class ProviderHttp {
  constructor(
    /** The provider's name as a person knows it ("Gmail", "Stripe"). */
    readonly provider: string,
    private readonly timeoutMs: number,
  ) {}

  async send(url: string, req: ProviderRequest): Promise<ProviderAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = req.form.toString();
    }
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: req.method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await res.text();
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new AppError(503, 'provider_unavailable', `${this.provider} did not answer${timedOut ? ` within ${this.timeoutMs} ms` : ' (connection failed)'}; try again in a few seconds`, undefined, { retryAfterSeconds: 5 });
    }
    let json: unknown;
    let garbage = false;
    if (text !== '') {
      try {
        json = JSON.parse(text);
      } catch {
        garbage = true;
      }
    }
    const ra = retryAfter(res.headers.get('retry-after'));
    if (res.status === 401) throw new ProviderUnauthorized(this.provider);
    if (res.status === 429) {
      throw new AppError(429, 'provider_rate_limited', `${this.provider} is rate-limiting this account`, undefined, { retryAfterSeconds: ra ?? 30 });
    }
    if (res.status >= 500) {
      throw new AppError(503, 'provider_unavailable', `${this.provider} failed (HTTP ${res.status}); this is on the provider's side`, undefined, { retryAfterSeconds: ra ?? 5 });
    }
    if (garbage || (res.ok && res.status !== 204 && text === '')) {
      throw new AppError(503, 'provider_bad_response', `${this.provider} answered with something that is not the JSON its API promises (HTTP ${res.status}); try again later`, undefined, { retryAfterSeconds: 10 });
    }
    if (res.status === 404 || res.status === 410) throw new AppError(404, 'not_found', `${this.provider}: ${providerMessage(json) ?? 'not found'}`);
    if (res.status >= 400) throw new AppError(400, 'provider_rejected', `${this.provider} refused the request: ${providerMessage(json) ?? `HTTP ${res.status}`}`, { providerCode: providerCode(json) });
    return { status: res.status, json, retryAfterSeconds: ra };
  }
}

/** The refusal a model sees when the credentials stay refused after a refresh. */
export function credentialsRefused(provider: string, integration: string): AppError {
  return new AppError(
    409,
    'reauthorization_required',
    `${provider} no longer accepts this tool's credentials. Do not retry: tell the user to connect the ${integration} tool again (POST /v1/integrations/${integration}/connect) and sign in`,
  );
}
