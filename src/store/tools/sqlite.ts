import type { OAuthState, PaymentEvent, ToolRecord } from '../../domain/tools.js';
import type { SqliteDb, WriteOp } from '../sqlite/db.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';
import { openCredentials, sealCredentials, type ToolRepo } from './port.js';

/*
 * Collections: tools (id → record), toolCredentials (id → sealed),
 * toolStates (state → OAuthState), toolPayments (`<tool>/<event id>` →
 * event), toolReturnOrigins (origin → true). One process in embedded mode:
 * check-and-write without an await in between is atomic, and the refresh
 * lock lives in memory.
 */
export function createSqliteToolRepo(db: SqliteDb, box: SecretBox): ToolRepo {
  const locks = new Map<string, { owner: string; until: number }>();
  return {
    async create(tool, credentials) {
      const ops: WriteOp[] = [{ coll: 'tools', key: tool.id, value: tool }];
      if (credentials !== null) ops.push({ coll: 'toolCredentials', key: tool.id, value: sealCredentials(box, tool.id, credentials) });
      await db.write(ops);
    },
    async get(organizationId, id) {
      const t = db.get<ToolRecord>('tools', id);
      return t !== undefined && t.organizationId === organizationId ? t : null;
    },
    async getGlobal(id) {
      return db.get<ToolRecord>('tools', id) ?? null;
    },
    async list(organizationId) {
      return [...db.values<ToolRecord>('tools')].filter((t) => t.organizationId === organizationId).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },
    async update(tool) {
      const cur = db.get<ToolRecord>('tools', tool.id);
      if (cur === undefined || cur.organizationId !== tool.organizationId) return false;
      await db.put('tools', tool.id, tool);
      return true;
    },
    async touch(organizationId, id, at) {
      const cur = db.get<ToolRecord>('tools', id);
      if (cur === undefined || cur.organizationId !== organizationId) return;
      await db.put('tools', id, { ...cur, lastUsedAt: at });
    },
    async delete(organizationId, id) {
      const cur = db.get<ToolRecord>('tools', id);
      if (cur === undefined || cur.organizationId !== organizationId) return false;
      const ops: WriteOp[] = [
        { coll: 'tools', key: id, delete: true },
        { coll: 'toolCredentials', key: id, delete: true },
      ];
      for (const k of db.entries<PaymentEvent>('toolPayments')) if (k[0].startsWith(`${id}/`)) ops.push({ coll: 'toolPayments', key: k[0], delete: true });
      await db.write(ops);
      return true;
    },
    async getCredentials(toolId) {
      const sealed = db.get<SealedSecret>('toolCredentials', toolId);
      if (sealed === undefined) return null;
      const creds = openCredentials(box, toolId, sealed);
      if (box.stale(sealed)) await db.put('toolCredentials', toolId, sealCredentials(box, toolId, creds));
      return creds;
    },
    async putCredentials(toolId, credentials) {
      if (!db.has('tools', toolId)) return false;
      await db.put('toolCredentials', toolId, sealCredentials(box, toolId, credentials));
      return true;
    },
    async putState(state) {
      await db.put('toolStates', state.state, state);
      // Expired states nobody came back for.
      const now = Date.now();
      const stale: WriteOp[] = [];
      for (const [k, s] of db.entries<OAuthState>('toolStates')) if (s.expiresAt <= now - 60_000 && stale.length < 100) stale.push({ coll: 'toolStates', key: k, delete: true });
      if (stale.length > 0) await db.write(stale);
    },
    async takeState(state, now) {
      const s = db.get<OAuthState>('toolStates', state);
      if (s === undefined) return null;
      const done = db.delete('toolStates', state);
      await done;
      return s.expiresAt > now ? s : null;
    },
    async tryLock(toolId, owner, ttlMs) {
      const now = Date.now();
      const cur = locks.get(toolId);
      if (cur !== undefined && cur.until > now && cur.owner !== owner) return false;
      locks.set(toolId, { owner, until: now + ttlMs });
      return true;
    },
    async unlock(toolId, owner) {
      if (locks.get(toolId)?.owner === owner) locks.delete(toolId);
    },
    async recordPaymentEvent(toolId, event) {
      const key = `${toolId}/${event.eventId}`;
      if (db.has('toolPayments', key) || !db.has('tools', toolId)) return false;
      await db.put('toolPayments', key, event);
      return true;
    },
    async paymentEvents(toolId, paymentId) {
      return [...db.entries<PaymentEvent>('toolPayments')].filter(([k, e]) => k.startsWith(`${toolId}/`) && e.paymentId === paymentId).map(([, e]) => e);
    },
    async allowReturnOrigin(origin) {
      await db.put('toolReturnOrigins', origin, true);
    },
    async removeReturnOrigin(origin) {
      if (!db.has('toolReturnOrigins', origin)) return false;
      await db.delete('toolReturnOrigins', origin);
      return true;
    },
    async returnOrigins() {
      return [...db.entries<boolean>('toolReturnOrigins')].map(([k]) => k).sort();
    },
    // The node's database: closed by whoever opened it, after every module stopped.
    close: () => db.sync(),
  };
}
