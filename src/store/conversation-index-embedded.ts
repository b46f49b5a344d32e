import type { ConversationRecord, ReadMarker } from '../domain/conversation.js';
import type { EmbeddedDb } from './embedded-db.js';
import type { ConversationIndexRepo } from './conversation-index-types.js';

const COLL = 'conversations';
const SEEN = 'conversationsSeen';

/**
 * Conversations in the embedded db (`conversations`), with an in-memory list
 * per organization for paging. Compare and write happen in one synchronous
 * step, so nothing interleaves between the version check and the write.
 */
export function createEmbeddedConversationIndex(db: EmbeddedDb): ConversationIndexRepo {
  const k = (org: string, aeid: string) => `${org}/${aeid}`;
  const byOrg = new Map<string, Set<string>>();
  const remember = (r: ConversationRecord) => {
    let s = byOrg.get(r.organizationId);
    if (s === undefined) byOrg.set(r.organizationId, (s = new Set()));
    s.add(r.audienceExternalId);
  };
  for (const r of db.values<ConversationRecord>(COLL)) remember(r);

  return {
    async put(r) {
      const key = k(r.organizationId, r.audienceExternalId);
      const cur = db.get<ConversationRecord>(COLL, key);
      if (cur !== undefined && cur.version >= r.version) return false;
      remember(r);
      await db.put(COLL, key, r);
      return true;
    },
    async get(org, aeid) {
      return db.get<ConversationRecord>(COLL, k(org, aeid)) ?? null;
    },
    async list(q) {
      const all = [...(byOrg.get(q.organizationId) ?? [])]
        .map((aeid) => db.get<ConversationRecord>(COLL, k(q.organizationId, aeid)))
        .filter((r): r is ConversationRecord => r !== undefined)
        .filter((r) => (q.status === undefined || r.status === q.status) && (q.assigneeId === undefined || (r.status === 'assigned' && r.assigneeId === q.assigneeId)));
      if (q.status === 'queued') all.sort((a, b) => (a.queuedAt ?? '').localeCompare(b.queuedAt ?? '') || a.audienceExternalId.localeCompare(b.audienceExternalId));
      else all.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.audienceExternalId.localeCompare(b.audienceExternalId));
      return { conversations: all.slice(q.offset, q.offset + q.limit), total: all.length };
    },
    async markSeen(org, userId, aeid, marker) {
      await db.put(SEEN, `${org}/${userId}/${aeid}`, marker);
    },
    async seen(org, userId, aeids) {
      const out = new Map<string, ReadMarker>();
      for (const aeid of aeids) {
        const m = db.get<ReadMarker>(SEEN, `${org}/${userId}/${aeid}`);
        if (m !== undefined) out.set(aeid, m);
      }
      return out;
    },
  };
}
