import type { Clock } from '../../clock.js';
import type { AgentPresence, PresenceChoice, PresenceStore } from './port.js';

interface OrgPresence {
  /** user → node → lease expiry (ms). */
  leases: Map<string, Map<string, number>>;
  choices: Map<string, PresenceChoice>;
}

/** In-process presence (embedded mode: one node). Not persisted: after a restart every agent reconnects anyway. */
export function createMemoryPresenceStore(clock: Clock): PresenceStore {
  const orgs = new Map<string, OrgPresence>();
  const of = (org: string) => {
    let o = orgs.get(org);
    if (o === undefined) orgs.set(org, (o = { leases: new Map(), choices: new Map() }));
    return o;
  };
  const connected = (o: OrgPresence, userId: string) => {
    const nodes = o.leases.get(userId);
    if (nodes === undefined) return false;
    const now = clock.now();
    for (const [node, until] of nodes) if (until <= now) nodes.delete(node);
    if (nodes.size === 0) o.leases.delete(userId);
    return nodes.size > 0;
  };
  return {
    async attach(org, userId, node, ttlMs) {
      const o = of(org);
      const nodes = o.leases.get(userId) ?? new Map<string, number>();
      o.leases.set(userId, nodes);
      nodes.set(node, clock.now() + ttlMs);
    },
    async detach(org, userId, node) {
      const nodes = orgs.get(org)?.leases.get(userId);
      nodes?.delete(node);
      if (nodes?.size === 0) orgs.get(org)!.leases.delete(userId);
    },
    async choose(org, userId, status) {
      of(org).choices.set(userId, status);
    },
    async choiceOf(org, userId) {
      return orgs.get(org)?.choices.get(userId) ?? 'online';
    },
    async list(org) {
      const o = orgs.get(org);
      if (o === undefined) return [];
      const out: AgentPresence[] = [];
      for (const userId of [...o.leases.keys()]) if (connected(o, userId)) out.push({ userId, status: o.choices.get(userId) ?? 'online' });
      return out.sort((a, b) => a.userId.localeCompare(b.userId));
    },
    async forget(org, userId) {
      const o = orgs.get(org);
      o?.leases.delete(userId);
      o?.choices.delete(userId);
    },
  };
}
