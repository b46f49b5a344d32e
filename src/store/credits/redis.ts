import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import { CREDIT_LEDGER_SIZE, CREDIT_RECORD_TTL_MS, type CreditEntry, type CreditRepo } from './port.js';

/*
 * Key layout (all under the organization's hash tag, so each script's keys share a slot):
 *   <p>:{o:<org>}:credits              balance (integer)
 *   <p>:{o:<org>}:credit-res:<id>      "reserved:<amount>" | "refunded:<amount>", expires after 30 days
 *   <p>:{o:<org>}:credit-topup:<id>    "1", expires after 30 days
 *   <p>:{o:<org>}:credit-ledger        list of change JSON, newest first; read to CREDIT_LEDGER_SIZE,
 *                                      trimmed to it once it is LEDGER_SLACK longer
 *
 * Each script appends its ledger entry itself (time from Redis), so a change and its entry are one.
 */

/** Entries the ledger may hold beyond CREDIT_LEDGER_SIZE before it is trimmed: a trim per change would be one more command per send. */
const LEDGER_SLACK = 100;

const LEDGER = `
local function ledger(key, kind, amount, balance, ref)
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local n = redis.call('LPUSH', key, cjson.encode({ms = ms, kind = kind, amount = amount, balance = balance, reference = ref}))
  if n > ${CREDIT_LEDGER_SIZE + LEDGER_SLACK} then redis.call('LTRIM', key, 0, ${CREDIT_LEDGER_SIZE - 1}) end
end
`;

// Claims the reservation id first and charges second, undoing both when the balance is short
// (rare): the common path is one write each, no reads.
const reserveScript = new LuaScript(LEDGER + `
if not redis.call('SET', KEYS[2], 'reserved:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}
end
local amount = tonumber(ARGV[1])
local bal = redis.call('DECRBY', KEYS[1], amount)
if bal < 0 then
  redis.call('DEL', KEYS[2])
  return {0, redis.call('INCRBY', KEYS[1], amount)}
end
ledger(KEYS[3], 'charge', -amount, bal, ARGV[3])
return {1, bal}
`);

const refundScript = new LuaScript(LEDGER + `
local r = redis.call('GET', KEYS[2])
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
if not r or string.sub(r, 1, 9) ~= 'reserved:' then return {0, bal} end
local amount = tonumber(string.sub(r, 10))
bal = redis.call('INCRBY', KEYS[1], amount)
redis.call('SET', KEYS[2], 'refunded:' .. amount, 'KEEPTTL')
ledger(KEYS[3], 'refund', amount, bal, ARGV[1])
return {1, bal}
`);

// Like refund, but forgets the reservation (the send did not happen; a retry is charged anew).
const releaseScript = new LuaScript(LEDGER + `
local r = redis.call('GET', KEYS[2])
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
if not r or string.sub(r, 1, 9) ~= 'reserved:' then return {0, bal} end
local amount = tonumber(string.sub(r, 10))
bal = redis.call('INCRBY', KEYS[1], amount)
redis.call('DEL', KEYS[2])
ledger(KEYS[3], 'release', amount, bal, ARGV[1])
return {1, bal}
`);

const topUpScript = new LuaScript(LEDGER + `
if KEYS[2] ~= KEYS[1] then
  if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) == false then
    return {0, tonumber(redis.call('GET', KEYS[1]) or '0')}
  end
end
local bal = redis.call('INCRBY', KEYS[1], ARGV[1])
local ref = cjson.null
if ARGV[3] ~= '' then ref = ARGV[3] end
ledger(KEYS[3], 'top_up', tonumber(ARGV[1]), bal, ref)
return {1, bal}
`);

export function createRedisCreditRepo(redis: RedisClient, prefix: string): CreditRepo {
  const k = (org: string) => orgKeys(prefix, org);
  const pair = (r: unknown) => {
    const [a, b] = r as [number, number];
    return [Number(a), Number(b)] as const;
  };
  return {
    async balance(org) {
      return Number((await redis.get(k(org)('credits'))) ?? 0);
    },
    async history(org, limit) {
      const raws = await redis.lRange(k(org)('credit-ledger'), 0, Math.max(0, Math.min(limit, CREDIT_LEDGER_SIZE) - 1));
      return raws.map((raw) => {
        const e = JSON.parse(raw) as { ms: number; kind: CreditEntry['kind']; amount: number; balance: number; reference?: string | null };
        return { at: new Date(e.ms).toISOString(), kind: e.kind, amount: e.amount, balance: e.balance, reference: e.reference ?? null };
      });
    },
    async topUp(org, amount, operationId) {
      const keys = [k(org)('credits'), operationId === undefined ? k(org)('credits') : k(org)('credit-topup', operationId), k(org)('credit-ledger')];
      const [applied, balance] = pair(await topUpScript.run(redis, keys, [amount, CREDIT_RECORD_TTL_MS, operationId ?? '']));
      return { balance, applied: applied === 1 };
    },
    async reserve(org, id, amount) {
      const [ok, balance] = pair(await reserveScript.run(redis, [k(org)('credits'), k(org)('credit-res', id), k(org)('credit-ledger')], [amount, CREDIT_RECORD_TTL_MS, id]));
      return { ok: ok === 1, balance };
    },
    async refund(org, id) {
      const [refunded, balance] = pair(await refundScript.run(redis, [k(org)('credits'), k(org)('credit-res', id), k(org)('credit-ledger')], [id]));
      return { refunded: refunded === 1, balance };
    },
    async release(org, id) {
      const [released, balance] = pair(await releaseScript.run(redis, [k(org)('credits'), k(org)('credit-res', id), k(org)('credit-ledger')], [id]));
      return { released: released === 1, balance };
    },
  };
}
