import { nextStatus } from '../messaging/rules.js';
import type { SessionMessage } from '../messaging/types.js';
import type { EmbeddedDb, WriteOp } from './embedded-db.js';
import type { SessionMessageRepo, SessionRef } from './session-message-types.js';

type Stored = SessionMessage & { seq: number };

/**
 * Messages in the embedded db (`smsg`, `smsgNet`, `ssessions`); each session's
 * order is an in-memory index rebuilt at start from the stored sequence numbers.
 */
export function createEmbeddedSessionMessageRepo(db: EmbeddedDb): SessionMessageRepo {
  const k = (org: string, id: string) => `${org}/${id}`;
  const order = new Map<string, string[]>();
  let seq = 0;
  const all = [...db.values<Stored>('smsg')].sort((a, b) => a.seq - b.seq);
  for (const m of all) {
    seq = Math.max(seq, m.seq);
    const key = k(m.organizationId, m.sessionId);
    const list = order.get(key) ?? [];
    list.push(m._id);
    order.set(key, list);
  }
  const strip = (m: Stored): SessionMessage => {
    const { seq: _s, ...rest } = m;
    return rest;
  };
  return {
    async registerSession(ref) {
      if (db.has('ssessions', k(ref.organizationId, ref.sessionId))) return;
      await db.put('ssessions', k(ref.organizationId, ref.sessionId), ref);
    },
    async append(m) {
      if (db.has('smsg', k(m.organizationId, m._id))) return false;
      const ops: WriteOp[] = [{ coll: 'smsg', key: k(m.organizationId, m._id), value: { ...m, seq: ++seq } }];
      if (m.messageId !== null) ops.push({ coll: 'smsgNet', key: k(m.organizationId, m.messageId), value: m._id });
      const sk = k(m.organizationId, m.sessionId);
      if (!db.has('ssessions', sk)) {
        ops.push({ coll: 'ssessions', key: sk, value: { sessionId: m.sessionId, organizationId: m.organizationId, audienceExternalId: m.audienceExternalId, openedAt: m.sentAt } satisfies SessionRef });
      }
      const list = order.get(sk) ?? [];
      list.push(m._id);
      order.set(sk, list);
      await db.write(ops);
      return true;
    },
    async advanceStatus(m) {
      const key = k(m.organizationId, m._id);
      const cur = db.get<Stored>('smsg', key);
      if (cur === undefined) return { applied: false, status: null };
      const stored = cur.status ?? 'accepted';
      // Compared and applied in memory in one synchronous step: nothing interleaves before the write.
      if (nextStatus(stored, m.status) !== m.status) return { applied: false, status: stored };
      await db.write([{ coll: 'smsg', key, value: { ...m, seq: cur.seq } }]);
      return { applied: true, status: m.status };
    },
    async get(org, id) {
      const m = db.get<Stored>('smsg', k(org, id));
      return m === undefined ? null : strip(m);
    },
    async getByNetworkId(org, netId) {
      const id = db.get<string>('smsgNet', k(org, netId));
      const m = id === undefined ? undefined : db.get<Stored>('smsg', k(org, id));
      return m === undefined ? null : strip(m);
    },
    async contactSessions(org, aeid) {
      return [...db.values<SessionRef>('ssessions')].filter((r) => r.organizationId === org && r.audienceExternalId === aeid).sort((a, b) => b.openedAt.localeCompare(a.openedAt));
    },
    async getSession(org, sid) {
      return db.get<SessionRef>('ssessions', k(org, sid)) ?? null;
    },
    async listSession(org, sid) {
      if (!db.has('ssessions', k(org, sid))) return null;
      return (order.get(k(org, sid)) ?? []).map((id) => db.get<Stored>('smsg', k(org, id))).filter((m): m is Stored => m !== undefined).map(strip);
    },
  };
}
