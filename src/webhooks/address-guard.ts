import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard: which addresses a webhook may reach. Pure functions; the HTTP
 * client applies them to the address it actually connects to (after DNS), so a
 * name that resolves to a private address — or re-resolves to one later
 * (DNS rebinding) — is refused.
 */

export interface AddressPolicy {
  /** Development only: loopback receivers (and plain http to them) are allowed. */
  allowLoopback: boolean;
}

const ranges: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001::', 32, 'ipv6', 'Teredo'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = ranges.map(([net, prefix, family, label]) => {
  const bl = new BlockList();
  bl.addSubnet(net, prefix, family);
  return { bl, family, label };
});

const loopback4 = new BlockList();
loopback4.addSubnet('127.0.0.0', 8, 'ipv4');
const loopback6 = new BlockList();
loopback6.addAddress('::1', 'ipv6');

/** The loopback addresses a development setup may use: 127.0.0.0/8 and ::1 (not their IPv4-mapped forms). */
export function isLoopback(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return loopback4.check(ip, 'ipv4');
  return family === 6 && loopback6.check(ip, 'ipv6');
}

/** Why `ip` may not be contacted, or null when it may. */
export function blockedReason(ip: string, policy: AddressPolicy): string | null {
  const family = isIP(ip);
  if (family === 0) return `${ip} is not an IP address`;
  if (policy.allowLoopback && isLoopback(ip)) return null;
  const fam = family === 4 ? 'ipv4' : 'ipv6';
  for (const { bl, family: f, label } of lists) {
    if (f === fam && bl.check(ip, fam)) return `${ip} is in the ${label} range${label === 'loopback' ? ' (allowed only with WEBHOOK_ALLOW_LOOPBACK=true, for development)' : ''}`;
  }
  return null;
}

/** Strips the brackets of an IPv6 URL host. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Checks a receiver URL before anything is sent: absolute https (http only
 * with the development flag), no credentials, and a literal IP host must be
 * allowed. Host names are checked again at connection time.
 */
export function checkWebhookUrl(raw: string, policy: AddressPolicy): UrlCheck {
  if (raw.length > 2048) return { ok: false, reason: 'url is longer than 2048 characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' };
  }
  const host = hostOf(url);
  const lower = host.toLowerCase().replace(/\.$/, '');
  const local = isIP(host) === 0 ? lower === 'localhost' || lower.endsWith('.localhost') : isLoopback(host);
  // Checked first: a developer's http://localhost receiver should learn how to proceed, not only "use https".
  if (local && !policy.allowLoopback && (url.protocol === 'http:' || url.protocol === 'https:')) return { ok: false, reason: loopbackRefusal(host) };
  if (url.protocol === 'http:') {
    if (!policy.allowLoopback) return { ok: false, reason: 'url must use https' };
  } else if (url.protocol !== 'https:') {
    return { ok: false, reason: `url must use https (not ${url.protocol.replace(/:$/, '')})` };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not contain credentials' };
  if (host === '') return { ok: false, reason: 'url has no host' };
  if (isIP(host) !== 0) {
    const why = blockedReason(host, policy);
    if (why !== null) return { ok: false, reason: `url points to a forbidden address: ${why}` };
    if (url.protocol === 'http:' && !isLoopback(host)) return { ok: false, reason: 'plain http is only allowed to loopback (development)' };
  } else if (url.protocol === 'http:' && !local) {
    return { ok: false, reason: 'plain http is only allowed to loopback (development)' };
  }
  return { ok: true, url };
}

/** Why a loopback receiver is refused, and the two ways a developer can go on. */
export function loopbackRefusal(host: string): string {
  return (
    `url points to this machine (${host}), which webhooks may not reach. For local development, either ` +
    'start the service with WEBHOOK_ALLOW_LOOPBACK=true (also allows plain http to loopback), or register nothing and ' +
    'forward events to the local URL with: npm run admin -- webhooks listen --forward-to <url>'
  );
}
