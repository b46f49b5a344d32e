/*
 * DNS-rebinding guard for the MCP endpoint (MCP spec, Streamable HTTP,
 * "Security Warning"): a web page whose name was re-pointed at this server
 * sends the attacker's Host, and a browser adds the attacker's Origin.
 * Host must be one of the allowed names; Origin, when present, one of the
 * allowed origins. Pure: the HTTP layer only translates.
 */

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

export interface RebindingPolicy {
  /** Lower-case host names without port (`[::1]` with brackets). */
  hosts: ReadonlySet<string>;
  /** Lower-case origins (`https://app.example.com`, with port when not the default). */
  origins: ReadonlySet<string>;
  /** Any loopback origin, whatever its port (a local MCP client or inspector). */
  loopbackOrigins: boolean;
}

function urlOf(v: string | undefined): URL | undefined {
  if (v === undefined) return undefined;
  try {
    return new URL(v);
  } catch {
    return undefined;
  }
}

/**
 * The policy from config. Without explicit lists: loopback names plus the
 * hosts (and origins) of the public URLs the service is reached under.
 */
export function rebindingPolicy(opts: {
  allowedHosts?: string[] | undefined;
  allowedOrigins?: string[] | undefined;
  publicUrls: (string | undefined)[];
}): RebindingPolicy {
  const publics = opts.publicUrls.map(urlOf).filter((u): u is URL => u !== undefined);
  const hosts = opts.allowedHosts ?? [...LOOPBACK_HOSTS, ...publics.map((u) => u.hostname.toLowerCase())];
  const origins = opts.allowedOrigins ?? publics.map((u) => u.origin.toLowerCase());
  return { hosts: new Set(hosts), origins: new Set(origins), loopbackOrigins: opts.allowedOrigins === undefined };
}

export type RebindingVerdict = { ok: true } | { ok: false; reason: string };

/**
 * The Origin half of the guard (the Host half is the SDK's
 * `hostHeaderValidation` over `policy.hosts`). Requests without Origin are
 * not from a browser page and pass.
 */
export function checkOrigin(policy: RebindingPolicy, originHeader: string | undefined): RebindingVerdict {
  if (originHeader === undefined) return { ok: true };
  const origin = urlOf(originHeader);
  // `Origin: null` (sandboxed frames, file://) is a browser that will not say who it is.
  if (origin === undefined || origin.origin === 'null') return { ok: false, reason: `Invalid Origin header: ${originHeader}` };
  if (policy.origins.has(origin.origin.toLowerCase())) return { ok: true };
  if (policy.loopbackOrigins && LOOPBACK_HOSTS.includes(origin.hostname.toLowerCase())) return { ok: true };
  return { ok: false, reason: `Invalid Origin header: ${originHeader}` };
}
