import { LuaScript, orgKeys, type RedisClient } from './redis-client.js';
import { CREDIT_RECORD_TTL_MS, type CreditRepo } from './credit-types.js';

/*
 * Key layout (all under the organization's hash tag, so each script's keys share a slot):
 *   <p>:{o:<org>}:credits              balance (integer)
 *   <p>:{o:<org>}:credit-res:<id>      "reserved:<amount>" | "refunded:<amount>", expires after 30 days
 *   <p>:{o:<org>}:credit-topup:<id>    "1", expires after 30 days
 */

const reserveScript = new LuaScript(`
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
if redis.call('EXISTS', KEYS[2]) == 1 then return {1, bal} end
local amount = tonumber(ARGV[1])
if bal < amount then return {0, bal} end
bal = redis.call('DECRBY', KEYS[1], amount)
redis.call('SET', KEYS[2], 'reserved:' .. ARGV[1], 'PX', ARGV[2])
return {1, bal}
`);

const refundScript = new LuaScript(`
local r = redis.call('GET', KEYS[2])
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
if not r or string.sub(r, 1, 9) ~= 'reserved:' then return {0, bal} end
local amount = tonumber(string.sub(r, 10))
bal = redis.call('INCRBY', KEYS[1], amount)
redis.call('SET', KEYS[2], 'refunded:' .. amount, 'KEEPTTL')
return {1, bal}
`);

// Like refund, but forgets the reservation (the send did not happen; a retry is charged anew).
const releaseScript = new LuaScript(`
local r = redis.call('GET', KEYS[2])
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
if not r or string.sub(r, 1, 9) ~= 'reserved:' then return {0, bal} end
local amount = tonumber(string.sub(r, 10))
bal = redis.call('INCRBY', KEYS[1], amount)
redis.call('DEL', KEYS[2])
return {1, bal}
`);

const topUpScript = new LuaScript(`
if KEYS[2] ~= KEYS[1] then
  if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) == false then
    return {0, tonumber(redis.call('GET', KEYS[1]) or '0')}
  end
end
return {1, redis.call('INCRBY', KEYS[1], ARGV[1])}
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
    async topUp(org, amount, operationId) {
      const keys = [k(org)('credits'), operationId === undefined ? k(org)('credits') : k(org)('credit-topup', operationId)];
      const [applied, balance] = pair(await topUpScript.run(redis, keys, [amount, CREDIT_RECORD_TTL_MS]));
      return { balance, applied: applied === 1 };
    },
    async reserve(org, id, amount) {
      const [ok, balance] = pair(await reserveScript.run(redis, [k(org)('credits'), k(org)('credit-res', id)], [amount, CREDIT_RECORD_TTL_MS]));
      return { ok: ok === 1, balance };
    },
    async refund(org, id) {
      const [refunded, balance] = pair(await refundScript.run(redis, [k(org)('credits'), k(org)('credit-res', id)], []));
      return { refunded: refunded === 1, balance };
    },
    async release(org, id) {
      const [released, balance] = pair(await releaseScript.run(redis, [k(org)('credits'), k(org)('credit-res', id)], []));
      return { released: released === 1, balance };
    },
  };
}
