import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so two equal values give one text whatever their key order. Values come from parsed, depth-limited JSON. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Identifies a request (what it is and its validated body) for idempotency-key reuse checks. */
export function requestFingerprint(kind: string, body: unknown): string {
  return createHash('sha256').update(kind).update('\0').update(canonicalJson(body)).digest('base64url');
}
