import type { PaymentEvent, ToolRecord } from '../../domain/tools.js';
import type { PgDb } from '../postgres/db.js';
import type { RedisClient } from '../redis/client.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';
import { openCredentials, sealCredentials, type ToolRepo } from './port.js';
import { createRedisToolSignIns } from './redis-sign-ins.js';

const ORIGINS = 'toolReturnOrigins';
/** The tool a write refers to is gone (a delete won the race). */
const isMissingTool = (e: unknown) => (e as { code?: unknown } | null)?.code === '23503';

/**
 * The clustered tool store: tools, their sealed credentials and payment
 * events in PostgreSQL (credentials and events reference their tool, so a
 * delete takes them in the same statement and a write racing it cannot bring
 * them back), allowed return origins in `records`; OAuth states in flight
 * and refresh locks expire, so they stay in Redis (`redis-sign-ins.ts`).
 */
export function createPostgresToolRepo(db: PgDb, redis: RedisClient, prefix: string, box: SecretBox): ToolRepo {
  const read = async (id: string) => (await db.rows<{ body: ToolRecord }>('SELECT body FROM tools WHERE id = $1', [id]))[0]?.body ?? null;
  return {
    ...createRedisToolSignIns(redis, prefix),
    async create(tool, credentials) {
      await db.tx(async (q) => {
        await q.query('INSERT INTO tools (id, org, created_at, body) VALUES ($1, $2, $3, $4)', [tool.id, tool.organizationId, tool.createdAt, JSON.stringify(tool)]);
        if (credentials !== null) await q.query('INSERT INTO tool_credentials (tool_id, sealed) VALUES ($1, $2)', [tool.id, JSON.stringify(sealCredentials(box, tool.id, credentials))]);
      });
    },
    async get(organizationId, id) {
      const t = await read(id);
      return t !== null && t.organizationId === organizationId ? t : null;
    },
    getGlobal: read,
    async list(organizationId) {
      return (await db.rows<{ body: ToolRecord }>('SELECT body FROM tools WHERE org = $1 ORDER BY created_at, id', [organizationId])).map((r) => r.body);
    },
    async update(tool) {
      return (await db.query('UPDATE tools SET body = $3 WHERE id = $1 AND org = $2', [tool.id, tool.organizationId, JSON.stringify(tool)])).rowCount === 1;
    },
    async touch(organizationId, id, at) {
      // One field, in the statement: a concurrent change of another field stays.
      await db.query("UPDATE tools SET body = jsonb_set(body, '{lastUsedAt}', to_jsonb($3::text)) WHERE id = $1 AND org = $2", [id, organizationId, at]);
    },
    async delete(organizationId, id) {
      return (await db.query('DELETE FROM tools WHERE id = $1 AND org = $2', [id, organizationId])).rowCount === 1;
    },
    async getCredentials(toolId) {
      const row = (await db.rows<{ sealed: SealedSecret }>('SELECT sealed FROM tool_credentials WHERE tool_id = $1', [toolId]))[0];
      if (row === undefined) return null;
      const creds = openCredentials(box, toolId, row.sealed);
      if (box.stale(row.sealed)) {
        // Sealed again under the current key, unless another write got there first.
        await db.query('UPDATE tool_credentials SET sealed = $3 WHERE tool_id = $1 AND sealed = $2::jsonb', [toolId, JSON.stringify(row.sealed), JSON.stringify(sealCredentials(box, toolId, creds))]);
      }
      return creds;
    },
    async putCredentials(toolId, credentials) {
      try {
        const r = await db.query(
          'INSERT INTO tool_credentials (tool_id, sealed) SELECT id, $2 FROM tools WHERE id = $1 ON CONFLICT (tool_id) DO UPDATE SET sealed = excluded.sealed',
          [toolId, JSON.stringify(sealCredentials(box, toolId, credentials))],
        );
        return r.rowCount === 1;
      } catch (e) {
        if (isMissingTool(e)) return false;
        throw e;
      }
    },
    async recordPaymentEvent(toolId, event) {
      try {
        const r = await db.query(
          'INSERT INTO tool_payment_events (tool_id, event_id, payment_id, body) SELECT id, $2, $3, $4 FROM tools WHERE id = $1 ON CONFLICT (tool_id, event_id) DO NOTHING',
          [toolId, event.eventId, event.paymentId, JSON.stringify(event)],
        );
        return r.rowCount === 1;
      } catch (e) {
        if (isMissingTool(e)) return false;
        throw e;
      }
    },
    async paymentEvents(toolId, paymentId) {
      return (await db.rows<{ body: PaymentEvent }>('SELECT body FROM tool_payment_events WHERE tool_id = $1 AND payment_id = $2 ORDER BY event_id', [toolId, paymentId])).map((r) => r.body);
    },
    async allowReturnOrigin(origin) {
      await db.put(ORIGINS, origin, true);
    },
    async removeReturnOrigin(origin) {
      return db.delete(ORIGINS, origin);
    },
    async returnOrigins() {
      return (await db.rows<{ key: string }>('SELECT key FROM records WHERE coll = $1', [ORIGINS])).map((r) => r.key).sort();
    },
    // The pool and the Redis client are the node's: closed by whoever opened them.
    async close() {},
  };
}
