import type { OAuthState, PaymentEvent, ToolRecord } from '../../domain/tools.js';
import { getEach, LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';
import { openCredentials, sealCredentials, type ToolRepo } from './port.js';

/*
 * Key layout:
 *   <p>:{t:<id>}:tool          record JSON (global: provider webhooks look tools up by id)
 *   <p>:{t:<id>}:tool-cred     sealed credentials JSON
 *   <p>:{t:<id>}:tool-pay      hash: provider event id → payment event JSON
 *   <p>:{o:<org>}:tools        zset of the organization's tool ids, score = creation time
 *   <p>:tool-state:<state>     OAuth state JSON, expiring (PX)
 *   <p>:tool-lock:<id>         refresh lock owner, expiring (PX)
 *   <p>:tool-return-origins    set of allowed return-URL origins
 *
 * A tool's own keys share the `{t:<id>}` hash tag, so its scripts stay in
 * one slot (also on Redis Cluster); the organization's list is in another
 * slot and is written by a command of its own: before the record on create,
 * after it on delete, and readers skip ids whose record is gone.
 */

// KEYS: record, credentials. ARGV: record JSON, sealed credentials or ''.
const createScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2]) end
return 1
`);

// Only while the tool exists, so a write racing a delete cannot bring credentials back.
const setIfToolScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
return 1
`);

const deleteScript = new LuaScript(`
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
`);

// Read-modify-write of one field inside Redis, so it cannot undo a concurrent change of another.
const touchScript = new LuaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local t = cjson.decode(raw)
if t.organizationId ~= ARGV[1] then return 0 end
t.lastUsedAt = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(t))
return 1
`);

const unlockScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

const resealScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) end
return 1
`);

const recordPaymentScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
`);

export function createRedisToolRepo(redis: RedisClient, prefix: string, box: SecretBox, ownsClient = false): ToolRepo {
  const toolKey = (id: string) => `${prefix}:{t:${id}}:tool`;
  const credKey = (id: string) => `${prefix}:{t:${id}}:tool-cred`;
  const payKey = (id: string) => `${prefix}:{t:${id}}:tool-pay`;
  const listKey = (org: string) => orgKeys(prefix, org)('tools');
  const stateKey = (s: string) => `${prefix}:tool-state:${s}`;
  const lockKey = (id: string) => `${prefix}:tool-lock:${id}`;
  const originsKey = `${prefix}:tool-return-origins`;
  const read = async (id: string): Promise<ToolRecord | null> => {
    const raw = await redis.get(toolKey(id));
    return raw === null ? null : (JSON.parse(raw) as ToolRecord);
  };
  return {
    async create(tool, credentials) {
      const sealed = credentials === null ? '' : JSON.stringify(sealCredentials(box, tool.id, credentials));
      await redis.zAdd(listKey(tool.organizationId), { score: Date.parse(tool.createdAt), value: tool.id });
      const ok = Number(await createScript.run(redis, [toolKey(tool.id), credKey(tool.id)], [JSON.stringify(tool), sealed]));
      if (ok !== 1) throw new Error(`tool ${tool.id} exists`);
    },
    async get(organizationId, id) {
      const t = await read(id);
      return t !== null && t.organizationId === organizationId ? t : null;
    },
    getGlobal: read,
    async list(organizationId) {
      const ids = await redis.zRange(listKey(organizationId), 0, -1);
      if (ids.length === 0) return [];
      const raws = await getEach(redis, ids.map(toolKey));
      return raws
        .filter((r): r is string => r !== null)
        .map((r) => JSON.parse(r) as ToolRecord)
        .filter((t) => t.organizationId === organizationId);
    },
    async update(tool) {
      const cur = await read(tool.id);
      if (cur === null || cur.organizationId !== tool.organizationId) return false;
      return (await redis.set(toolKey(tool.id), JSON.stringify(tool), { XX: true })) === 'OK';
    },
    async touch(organizationId, id, at) {
      await touchScript.run(redis, [toolKey(id)], [organizationId, at]);
    },
    async delete(organizationId, id) {
      const cur = await read(id);
      if (cur === null || cur.organizationId !== organizationId) return false;
      await deleteScript.run(redis, [toolKey(id), credKey(id), payKey(id)], []);
      await redis.zRem(listKey(organizationId), id);
      return true;
    },
    async getCredentials(toolId) {
      const raw = await redis.get(credKey(toolId));
      if (raw === null) return null;
      const sealed = JSON.parse(raw) as SealedSecret;
      const creds = openCredentials(box, toolId, sealed);
      if (box.stale(sealed)) {
        // Sealed again under the current key, unless another write got there first.
        const fresh = JSON.stringify(sealCredentials(box, toolId, creds));
        await resealScript.run(redis, [credKey(toolId)], [raw, fresh]);
      }
      return creds;
    },
    async putCredentials(toolId, credentials) {
      return Number(await setIfToolScript.run(redis, [toolKey(toolId), credKey(toolId)], [JSON.stringify(sealCredentials(box, toolId, credentials))])) === 1;
    },
    async putState(state) {
      await redis.set(stateKey(state.state), JSON.stringify(state), { PX: Math.max(1, state.expiresAt - Date.now()) });
    },
    async takeState(state, now) {
      const raw = await redis.getDel(stateKey(state));
      if (raw === null) return null;
      const s = JSON.parse(raw) as OAuthState;
      return s.expiresAt > now ? s : null;
    },
    async tryLock(toolId, owner, ttlMs) {
      return (await redis.set(lockKey(toolId), owner, { NX: true, PX: ttlMs })) === 'OK';
    },
    async unlock(toolId, owner) {
      await unlockScript.run(redis, [lockKey(toolId)], [owner]);
    },
    async recordPaymentEvent(toolId, event) {
      return Number(await recordPaymentScript.run(redis, [toolKey(toolId), payKey(toolId)], [event.eventId, JSON.stringify(event)])) === 1;
    },
    async paymentEvents(toolId, paymentId) {
      const all = await redis.hVals(payKey(toolId));
      return all.map((r) => JSON.parse(r) as PaymentEvent).filter((e) => e.paymentId === paymentId);
    },
    async allowReturnOrigin(origin) {
      await redis.sAdd(originsKey, origin);
    },
    async removeReturnOrigin(origin) {
      return (await redis.sRem(originsKey, origin)) > 0;
    },
    async returnOrigins() {
      return (await redis.sMembers(originsKey)).sort();
    },
    async close() {
      if (ownsClient) await redis.close();
    },
  };
}
