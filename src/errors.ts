/**
 * The one error type the application throws on purpose. `code` is a stable
 * snake_case identifier clients can branch on; `status` is the HTTP status the
 * edge answers with; `details` is safe to show to the caller.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown; retryAfterSeconds?: number; extra?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.extra = options?.extra;
  }
  /** For 429/503: seconds the caller should wait before retrying. */
  readonly retryAfterSeconds: number | undefined;
  /** Extra top-level fields of the error body (for example `errorDetails`). */
  readonly extra: Record<string, unknown> | undefined;
}

export const badRequest = (code: string, message: string, details?: unknown) => new AppError(400, code, message, details);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string, details?: unknown) => new AppError(409, code, message, details);
export const unauthorized = (message = 'missing or invalid API key') => new AppError(401, 'unauthorized', message);
export const insufficientScope = (scope: string) =>
  new AppError(403, 'insufficient_scope', `this API key lacks the scope ${scope}`, { requiredScope: scope });
export const unavailable = (code: string, message: string, retryAfterSeconds = 1) =>
  new AppError(503, code, message, undefined, { retryAfterSeconds });

export const idempotencyKeyReused = () =>
  new AppError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request body; use a new key for a new request');

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
