import type { SqliteDb } from '../sqlite/db.js';
import type { VisitorRecord, VisitorRepo, VisitorTokenRecord, WebChatAttachmentRecord } from './port.js';

/** Visitors, tokens and attachments in the node's SQLite database (`webchat_visitors`, `webchat_tokens`, `webchat_attachments`). */
export function createSqliteVisitorRepo(db: SqliteDb): VisitorRepo {
  const s = (sql: string) => db.stmt(sql);
  const read = (org: string, channelId: string, id: string): VisitorRecord | null => {
    const row = s('SELECT body FROM webchat_visitors WHERE channel_id = ? AND id = ? AND org = ?').get(channelId, id, org) as { body: string } | undefined;
    return row === undefined ? null : (JSON.parse(row.body) as VisitorRecord);
  };
  return {
    async create(v) {
      await db.run(() => s('INSERT OR IGNORE INTO webchat_visitors (channel_id, id, org, body) VALUES (?, ?, ?, ?)').run(v.channelId, v.id, v.organizationId, JSON.stringify(v)));
      return read(v.organizationId, v.channelId, v.id) ?? v;
    },
    async get(org, channelId, id) {
      return read(org, channelId, id);
    },
    async update(v) {
      await db.run(() => s('UPDATE webchat_visitors SET body = ? WHERE channel_id = ? AND id = ? AND org = ?').run(JSON.stringify(v), v.channelId, v.id, v.organizationId));
    },
    async addToken(t) {
      await db.run(() => s('INSERT OR REPLACE INTO webchat_tokens (hash, org, channel_id, visitor_id, created_at) VALUES (?, ?, ?, ?, ?)').run(t.hash, t.organizationId, t.channelId, t.visitorId, t.createdAt));
    },
    async tokenByHash(hash) {
      const row = s('SELECT hash, org, channel_id, visitor_id, created_at FROM webchat_tokens WHERE hash = ?').get(hash) as
        | { hash: string; org: string; channel_id: string; visitor_id: string; created_at: string }
        | undefined;
      return row === undefined ? null : ({ hash: row.hash, organizationId: row.org, channelId: row.channel_id, visitorId: row.visitor_id, createdAt: row.created_at } satisfies VisitorTokenRecord);
    },
    async revokeVisitor(org, channelId, visitorId) {
      return db.run(() => s('DELETE FROM webchat_tokens WHERE channel_id = ? AND visitor_id = ? AND org = ?').run(channelId, visitorId, org).changes);
    },
    async revokeChannel(org, channelId) {
      return db.run(() => s('DELETE FROM webchat_tokens WHERE channel_id = ? AND org = ?').run(channelId, org).changes);
    },
    async putAttachment(a, bytes) {
      await db.run(() => s('INSERT INTO webchat_attachments (channel_id, id, org, body, bytes) VALUES (?, ?, ?, ?, ?)').run(a.channelId, a.id, a.organizationId, JSON.stringify(a), bytes));
    },
    async getAttachment(org, channelId, id) {
      const row = s('SELECT body, bytes FROM webchat_attachments WHERE channel_id = ? AND id = ? AND org = ?').get(channelId, id, org) as { body: string; bytes: Buffer } | undefined;
      return row === undefined ? null : { attachment: JSON.parse(row.body) as WebChatAttachmentRecord, bytes: row.bytes };
    },
  };
}
