/** A reply of a sandbox provider: status, JSON body (or HTML / a redirect), extra headers. */
export interface SandboxReply {
  status: number;
  body?: unknown;
  html?: string;
  redirect?: string;
  headers?: Record<string, string>;
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ALREADY_EXISTS', 410: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL' };
const REASON: Record<number, string> = { 400: 'invalid', 401: 'authError', 403: 'forbidden', 404: 'notFound', 409: 'duplicate', 410: 'deleted', 429: 'rateLimitExceeded', 500: 'backendError' };

/** Google APIs' error body: `{error: {code, message, errors: [{message, domain, reason}], status}}`. */
export function googleError(code: number, message: string): SandboxReply {
  return {
    status: code,
    body: { error: { code, message, errors: [{ message, domain: 'global', reason: REASON[code] ?? 'failed' }], status: STATUS[code] ?? 'UNKNOWN' } },
    ...(code === 401 ? { headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' } } : {}),
  };
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The frame of every sandbox page: says plainly it is a sandbox. */
export function sandboxPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} (sandbox)</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}.banner{background:#fff3cd;border:1px solid #e0c060;padding:.5rem .75rem;border-radius:6px;font-size:.9rem}button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:6px;border:1px solid #888;cursor:pointer}button.primary{background:#1a73e8;color:#fff;border-color:#1a73e8}input{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}label{display:block;margin:.75rem 0 .25rem}</style></head>
<body><p class="banner" role="note">Sandbox provider of Switchboard: nothing here reaches a real service.</p>${body}</body></html>`;
}
