import type { PgDb } from '../postgres/db.js';
import type { VisitorRecord, VisitorRepo, WebChatAttachmentRecord } from './port.js';

/** Visitors, tokens and attachments in PostgreSQL (`webchat_visitors`, `webchat_tokens`, `webchat_attachments`). */
export function createPostgresVisitorRepo(db: PgDb): VisitorRepo {
  const read = async (org: string, channelId: string, id: string): Promise<VisitorRecord | null> => {
    const rows = await db.rows<{ body: VisitorRecord }>('SELECT body FROM webchat_visitors WHERE channel_id = $1 AND id = $2 AND org = $3', [channelId, id, org]);
    return rows[0]?.body ?? null;
  };
  return {
    async create(v) {
      await db.query('INSERT INTO webchat_visitors (channel_id, id, org, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [v.channelId, v.id, v.organizationId, JSON.stringify(v)]);
      return (await read(v.organizationId, v.channelId, v.id)) ?? v;
    },
    get: read,
    async update(v) {
      await db.query('UPDATE webchat_visitors SET body = $4 WHERE channel_id = $1 AND id = $2 AND org = $3', [v.channelId, v.id, v.organizationId, JSON.stringify(v)]);
    },
    async addToken(t) {
      await db.query('INSERT INTO webchat_tokens (hash, org, channel_id, visitor_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (hash) DO NOTHING', [
        t.hash,
        t.organizationId,
        t.channelId,
        t.visitorId,
        t.createdAt,
      ]);
    },
    async tokenByHash(hash) {
      const rows = await db.rows<{ hash: string; org: string; channel_id: string; visitor_id: string; created_at: string }>(
        'SELECT hash, org, channel_id, visitor_id, created_at FROM webchat_tokens WHERE hash = $1',
        [hash],
      );
      const r = rows[0];
      return r === undefined ? null : { hash: r.hash, organizationId: r.org, channelId: r.channel_id, visitorId: r.visitor_id, createdAt: r.created_at };
    },
    async revokeVisitor(org, channelId, visitorId) {
      return (await db.query('DELETE FROM webchat_tokens WHERE channel_id = $1 AND visitor_id = $2 AND org = $3', [channelId, visitorId, org])).rowCount ?? 0;
    },
    async revokeChannel(org, channelId) {
      return (await db.query('DELETE FROM webchat_tokens WHERE channel_id = $1 AND org = $2', [channelId, org])).rowCount ?? 0;
    },
    async putAttachment(a, bytes) {
      await db.query('INSERT INTO webchat_attachments (channel_id, id, org, body, bytes) VALUES ($1, $2, $3, $4, $5)', [a.channelId, a.id, a.organizationId, JSON.stringify(a), bytes]);
    },
    async getAttachment(org, channelId, id) {
      const rows = await db.rows<{ body: WebChatAttachmentRecord; bytes: Buffer }>('SELECT body, bytes FROM webchat_attachments WHERE channel_id = $1 AND id = $2 AND org = $3', [channelId, id, org]);
      const r = rows[0];
      return r === undefined ? null : { attachment: r.body, bytes: r.bytes };
    },
  };
}
