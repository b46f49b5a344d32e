import { conflict } from '../../errors.js';
import { FreshCache } from '../fresh-cache.js';
import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { DeliveryQuery, DeliveryStatus, LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from './port.js';

/*
 * Key layout (prefix `sb`). An organization's keys share the `{o:<org>}` hash
 * tag, so each script below touches one slot, also on Redis Cluster, and
 * names every key it touches. The only global key is the lane schedule,
 * which is only ever touched on its own.
 *
 *   sb:{o:<org>}:wh:reg:<id>               registration JSON
 *   sb:{o:<org>}:wh:regs                   set of registration ids
 *   sb:{o:<org>}:wh:urls                   hash url -> registration id (409 on a second one)
 *   sb:{o:<org>}:wh:dlv:<id>               delivery JSON (expires after retention once finished)
 *   sb:{o:<org>}:wh:dlvs:<reg>             zset delivery id, score = createdAt ms (listing)
 *   sb:{o:<org>}:wh:dlvs:<reg>:<status>    the same per status
 *   sb:{o:<org>}:wh:due:<reg>              zset pending delivery id, score = due ms
 *   sb:{o:<org>}:wh:lane:<reg>             lease: owner token, PX lease
 *   sb:wh:lanes                            zset "<org>/<reg>", score = when to look at the lane
 *
 * The lane schedule is a hint kept conservative: a producer lowers a lane's
 * score (ZADD LT) after scheduling a delivery, and a releasing owner checks
 * the due set again after dropping its lease, so no wake-up is ever lost; a
 * lease key is the truth about who works a lane.
 */

const STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
/** Score of an idle lane (far future, still a valid double for ZADD LT). */
const IDLE = 8.64e15;

const createRegScript = new LuaScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[2])
return 1
`);

const updateRegScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`);

// KEYS: reg, regs, urls, dlvs, dlvs:pending, dlvs:succeeded, dlvs:failed, due,
// lane, then the key of every delivery listed in dlvs as the caller read it.
// ARGV: id, then those deliveries' ids. Every key is declared, so the
// caller's list is checked against dlvs: -1 when a delivery came or went
// since (read again and retry).
const deleteRegScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local ids = redis.call('ZRANGE', KEYS[4], 0, -1)
if #ids ~= #ARGV - 1 then return -1 end
local expected = {}
for i = 2, #ARGV do expected[ARGV[i]] = true end
for _, id in ipairs(ids) do
  if not expected[id] then return -1 end
end
local reg = cjson.decode(cur)
redis.call('HDEL', KEYS[3], reg.url)
redis.call('SREM', KEYS[2], ARGV[1])
for i = 10, #KEYS, 500 do
  local batch = {}
  for j = i, math.min(i + 499, #KEYS) do batch[#batch + 1] = KEYS[j] end
  redis.call('DEL', unpack(batch))
end
redis.call('DEL', KEYS[1], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9])
return 1
`);

const MAX_DELETE_ATTEMPTS = 20;

// KEYS: reg, dlv, dlvs, dlvs:pending, due. ARGV: json, id, createdMs, dueMs, pruneBeforeMs.
const enqueueScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX') == false then return 0 end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[5])
return 1
`);

// KEYS: dlv, dlvs:pending, dlvs:succeeded, dlvs:failed, due, dlvs. ARGV: json, id, status, createdMs, dueMs, retentionMs.
const saveScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == 'pending' then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[5], ARGV[5], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[6])
  redis.call('ZREM', KEYS[5], ARGV[2])
end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
local target = KEYS[2]
if ARGV[3] == 'succeeded' then target = KEYS[3] elseif ARGV[3] == 'failed' then target = KEYS[4] end
redis.call('ZADD', target, ARGV[4], ARGV[2])
return 1
`);

const renewScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

const releaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export interface RedisWebhookStoreOptions {
  /** Finished deliveries expire after this long (default 30 days). */
  retentionMs?: number;
}

/** How long an organization's registration list stays good for fan-out (a change on another node shows within it). */
const FRESH_MS = 1_000;

export function createRedisWebhookStore(client: RedisClient, prefix: string, opts: RedisWebhookStoreOptions = {}): WebhookStore {
  const retentionMs = opts.retentionMs ?? 30 * 86_400_000;
  // Every event is fanned out after a read of its organization's registrations (four per
  // template send with its statuses): a list read in the last FRESH_MS is taken from memory.
  // Changes through this store are seen at once; a delivery for a registration deleted on
  // another node meanwhile is refused by the enqueue script (it checks the registration).
  const fresh = new FreshCache<WebhookRegistration[]>(FRESH_MS);
  const lanesKey = `${prefix}:wh:lanes`;
  const k = (org: string) => orgKeys(prefix, org);
  const member = (l: LaneRef) => `${l.organizationId}/${l.registrationId}`;
  const parseMember = (m: string): LaneRef => {
    const slash = m.indexOf('/');
    return { organizationId: m.slice(0, slash), registrationId: m.slice(slash + 1) };
  };
  const lockKey = (l: LaneRef) => k(l.organizationId)('wh', 'lane', l.registrationId);
  const dueKey = (l: LaneRef) => k(l.organizationId)('wh', 'due', l.registrationId);

  const firstDue = async (l: LaneRef): Promise<number | undefined> => {
    const r = await client.zRangeWithScores(dueKey(l), 0, 0);
    return r[0]?.score;
  };
  const wake = (l: LaneRef, at: number) => client.zAdd(lanesKey, { score: at, value: member(l) }, { comparison: 'LT' });

  const parse = <T>(s: string | null | undefined): T | null => (s === null || s === undefined ? null : (JSON.parse(s) as T));
  const listRegistrations = async (org: string): Promise<WebhookRegistration[]> => {
    const ids = await client.sMembers(k(org)('wh', 'regs'));
    if (ids.length === 0) return [];
    const raw = await client.mGet(ids.map((id) => k(org)('wh', 'reg', id)));
    return raw
      .map((r) => parse<WebhookRegistration>(r))
      .filter((r): r is WebhookRegistration => r !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  };

  return {
    async createRegistration(reg) {
      const kk = k(reg.organizationId);
      const ok = await createRegScript.run(client, [kk('wh', 'urls'), kk('wh', 'reg', reg.id), kk('wh', 'regs')], [reg.url, reg.id, JSON.stringify(reg)]);
      fresh.forget((o) => o === reg.organizationId);
      if (ok === 0) throw conflict('webhook_url_taken', 'this URL is already registered in the organization', { url: reg.url });
    },
    async getRegistration(org, id) {
      return parse<WebhookRegistration>(await client.get(k(org)('wh', 'reg', id)));
    },
    listRegistrations: (org) => listRegistrations(org),
    fanOutRegistrations: (org) => fresh.get(org, () => listRegistrations(org)),
    async updateRegistration(reg) {
      const cur = await this.getRegistration(reg.organizationId, reg.id);
      if (cur === null) return false;
      const ok = await updateRegScript.run(client, [k(reg.organizationId)('wh', 'reg', reg.id)], [JSON.stringify({ ...reg, url: cur.url })]);
      fresh.forget((o) => o === reg.organizationId);
      return ok === 1;
    },
    async deleteRegistration(org, id) {
      const kk = k(org);
      const dl = kk('wh', 'dlvs', id);
      const fixed = [kk('wh', 'reg', id), kk('wh', 'regs'), kk('wh', 'urls'), dl, `${dl}:pending`, `${dl}:succeeded`, `${dl}:failed`, kk('wh', 'due', id), kk('wh', 'lane', id)];
      let ok = -1;
      for (let attempt = 0; attempt < MAX_DELETE_ATTEMPTS && ok === -1; attempt++) {
        const ids = await client.zRange(dl, 0, -1);
        ok = Number(await deleteRegScript.run(client, [...fixed, ...ids.map((d) => kk('wh', 'dlv', d))], [id, ...ids]));
      }
      fresh.forget((o) => o === org);
      if (ok === -1) throw conflict('concurrent_update', 'deliveries of this webhook keep changing; try again');
      await client.zRem(lanesKey, `${org}/${id}`);
      return ok === 1;
    },

    async enqueueDeliveries(deliveries) {
      const pruneBefore = Date.now() - retentionMs;
      await Promise.all(
        deliveries.map((d) => {
          const kk = k(d.organizationId);
          const dl = kk('wh', 'dlvs', d.registrationId);
          return enqueueScript.run(
            client,
            [kk('wh', 'reg', d.registrationId), kk('wh', 'dlv', d.id), dl, `${dl}:pending`, kk('wh', 'due', d.registrationId)],
            [JSON.stringify(d), d.id, Date.parse(d.createdAt), Date.parse(d.nextAttemptAt ?? d.createdAt), pruneBefore],
          );
        }),
      );
      // Woken whether or not the delivery was new: a redelivered fan-out
      // repairs a wake-up lost to a crash between the two steps.
      const earliest = new Map<string, { lane: LaneRef; at: number }>();
      for (const d of deliveries) {
        const lane = { organizationId: d.organizationId, registrationId: d.registrationId };
        const at = Date.parse(d.nextAttemptAt ?? d.createdAt);
        const cur = earliest.get(member(lane));
        if (cur === undefined || at < cur.at) earliest.set(member(lane), { lane, at });
      }
      await Promise.all([...earliest.values()].map((e) => wake(e.lane, e.at)));
    },
    async getDelivery(org, id) {
      return parse<WebhookDelivery>(await client.get(k(org)('wh', 'dlv', id)));
    },
    async listDeliveries(org, registrationId, q: DeliveryQuery) {
      const kk = k(org);
      const set = q.status === undefined ? kk('wh', 'dlvs', registrationId) : kk('wh', 'dlvs', registrationId, q.status);
      const [total, ids] = await Promise.all([client.zCard(set), client.zRange(set, q.offset, q.offset + q.limit - 1, { REV: true })]);
      if (ids.length === 0) return { deliveries: [], total };
      const raw = await client.mGet(ids.map((id) => kk('wh', 'dlv', id)));
      const deliveries: WebhookDelivery[] = [];
      const expired: string[] = [];
      raw.forEach((r, i) => {
        const d = parse<WebhookDelivery>(r);
        if (d === null) expired.push(ids[i]!);
        else deliveries.push(d);
      });
      // Finished deliveries expire by TTL; drop their index entries as they are found.
      if (expired.length > 0) await Promise.all([set, ...STATUSES.map((s) => kk('wh', 'dlvs', registrationId, s))].map((s) => client.zRem(s, expired)));
      return { deliveries, total: total - expired.length };
    },
    async saveDelivery(d) {
      const kk = k(d.organizationId);
      const dl = kk('wh', 'dlvs', d.registrationId);
      const dueAt = Date.parse(d.nextAttemptAt ?? d.updatedAt);
      const ok = await saveScript.run(
        client,
        [kk('wh', 'dlv', d.id), `${dl}:pending`, `${dl}:succeeded`, `${dl}:failed`, kk('wh', 'due', d.registrationId), dl],
        [JSON.stringify(d), d.id, d.status, Date.parse(d.createdAt), dueAt, retentionMs],
      );
      if (ok !== 1) return false;
      if (d.status === 'pending') await wake({ organizationId: d.organizationId, registrationId: d.registrationId }, dueAt);
      return true;
    },

    async dueDeliveries(lane, now, limit) {
      return client.zRangeByScore(dueKey(lane), '-inf', now, { LIMIT: { offset: 0, count: limit } });
    },
    async claimLanes(now, max, owner, leaseMs) {
      const candidates = await client.zRangeByScore(lanesKey, '-inf', now, { LIMIT: { offset: 0, count: max * 2 } });
      const out: LaneRef[] = [];
      for (const m of candidates) {
        if (out.length >= max) break;
        const lane = parseMember(m);
        const got = await client.set(lockKey(lane), owner, { NX: true, PX: leaseMs });
        if (got === 'OK') {
          await client.zAdd(lanesKey, { score: now + leaseMs, value: m }, { condition: 'XX' });
          out.push(lane);
        } else {
          // Someone works it: look again when their lease would lapse.
          const ttl = await client.pTTL(lockKey(lane));
          if (ttl > 0) await client.zAdd(lanesKey, { score: now + ttl, value: m }, { condition: 'XX', comparison: 'GT' });
        }
      }
      return out;
    },
    async renewLane(lane, owner, leaseMs) {
      return (await renewScript.run(client, [lockKey(lane)], [owner, leaseMs])) === 1;
    },
    async releaseLane(lane, owner) {
      const next = (await firstDue(lane)) ?? IDLE;
      await client.zAdd(lanesKey, { score: next, value: member(lane) }, { condition: 'XX' });
      await releaseScript.run(client, [lockKey(lane)], [owner]);
      // Whatever is due now must stand as the lane's score: a delivery
      // scheduled meanwhile, or a claimer that saw our lease and pushed the
      // lane back to its expiry (ZADD GT) just before we dropped it.
      const again = await firstDue(lane);
      if (again !== undefined) await wake(lane, again);
    },
  };
}
