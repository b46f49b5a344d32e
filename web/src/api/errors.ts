/** A refusal from the API, in its error shape: `{success:false, error:{code, message, details}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Seconds, from `Retry-After` (429, 503). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export async function errorFrom(res: Response, body?: unknown): Promise<ApiError> {
  let parsed = body;
  if (parsed === undefined) {
    try {
      parsed = await res.clone().json();
    } catch {
      parsed = undefined;
    }
  }
  const e = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? res.statusText ?? 'request failed', e?.details, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

/** What to show a person for a failed call. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
