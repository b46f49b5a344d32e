/**
 * The Graph API's versions and their lifetimes, as Meta's changelog
 * (developers.facebook.com/docs/graph-api/changelog/versions) publishes
 * them. A version lives about two years after the release that follows it;
 * `expiresOn` is null where Meta has not published a date yet.
 *
 * When a version expires Meta does not refuse its calls: it serves them with
 * the oldest version still available, and the `facebook-api-version`
 * response header names the version that answered. So an expired version
 * fails late and quietly, by behaving differently; a node warns
 * `GRAPH_VERSION_WARNING_DAYS` ahead instead.
 */
export interface GraphApiVersionInfo {
  version: string;
  releasedOn: string;
  expiresOn: string | null;
}

export const GRAPH_API_VERSIONS: readonly GraphApiVersionInfo[] = [
  { version: 'v27.0', releasedOn: '2026-11-04', expiresOn: null },
  { version: 'v26.0', releasedOn: '2026-07-29', expiresOn: null },
  { version: 'v25.0', releasedOn: '2026-02-18', expiresOn: '2028-07-29' },
  { version: 'v24.0', releasedOn: '2025-10-08', expiresOn: '2028-02-18' },
  { version: 'v23.0', releasedOn: '2025-05-29', expiresOn: '2027-10-08' },
  { version: 'v22.0', releasedOn: '2025-01-21', expiresOn: '2027-05-20' },
  { version: 'v21.0', releasedOn: '2024-10-02', expiresOn: '2027-01-21' },
  { version: 'v20.0', releasedOn: '2024-05-21', expiresOn: '2026-09-24' },
  { version: 'v19.0', releasedOn: '2024-01-23', expiresOn: '2026-05-21' },
  { version: 'v18.0', releasedOn: '2023-09-12', expiresOn: '2026-01-26' },
  { version: 'v17.0', releasedOn: '2023-05-23', expiresOn: '2025-09-12' },
  { version: 'v16.0', releasedOn: '2023-02-02', expiresOn: '2025-05-14' },
  { version: 'v15.0', releasedOn: '2022-09-15', expiresOn: '2024-11-20' },
  { version: 'v14.0', releasedOn: '2022-05-25', expiresOn: '2024-09-17' },
  { version: 'v13.0', releasedOn: '2022-02-08', expiresOn: '2024-05-28' },
];

/**
 * The version this service speaks when neither the deployment
 * (`GRAPH_API_VERSION`) nor the channel (`graphApiVersion`) names one: the
 * current one, whose send, template and media requests the adapter was
 * checked against.
 */
export const DEFAULT_GRAPH_API_VERSION = 'v27.0';

/** A channel's Graph API version as responses show it, with Meta's expiry of it (null: not published yet). */
export interface GraphApiInUse {
  version: string;
  expiresOn: string | null;
}

/** How long before a version's expiry a node starts warning about it. */
export const GRAPH_VERSION_WARNING_DAYS = 90;

export function graphVersionInfo(version: string): GraphApiVersionInfo | null {
  return GRAPH_API_VERSIONS.find((v) => v.version === version) ?? null;
}

/** True when Meta's calendar says the version no longer serves calls at `now`. */
export function graphVersionExpired(version: string, now: Date): boolean {
  const expires = graphVersionInfo(version)?.expiresOn;
  return expires !== undefined && expires !== null && now.getTime() >= Date.parse(`${expires}T00:00:00Z`);
}

/** The versions still alive at `now`, oldest first (what an expired version's calls are served with). */
export function aliveGraphVersions(now: Date): GraphApiVersionInfo[] {
  return GRAPH_API_VERSIONS.filter((v) => !graphVersionExpired(v.version, now)).reverse();
}

/** Days from `now` until the version expires; null when it has no published expiry. */
export function daysUntilExpiry(version: string, now: Date): number | null {
  const expires = graphVersionInfo(version)?.expiresOn;
  if (expires === undefined || expires === null) return null;
  return Math.floor((Date.parse(`${expires}T00:00:00Z`) - now.getTime()) / 86_400_000);
}

/**
 * A configured Graph API base, split: `https://graph.facebook.com` is the
 * host alone; `https://graph.facebook.com/v21.0` (the older form of the
 * setting) names its version too, which then stands as the default.
 */
export function splitGraphBase(url: string): { host: string; version: string | null } {
  const trimmed = url.replace(/\/+$/, '');
  const m = /^(.*)\/(v\d{1,3}\.\d)$/.exec(trimmed);
  return m ? { host: m[1]!, version: m[2]! } : { host: trimmed, version: null };
}
