import { getEach, LuaScript, type RedisClient } from '../../store/index.js';
import { SANDBOX_CONVERSATION_KEEP, type SandboxAccount, type SandboxMedia, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';

/*
 * Key layout (prefix + `:sbx`):
 *   :acct:<pnid>            account JSON           :accts      set of pnids
 *   :tpl:<waba>             hash name\0lang → JSON
 *   :in:<pnid>:<customer>   last inbound ms
 *   :msg:<id>               message JSON (7 days)  :conv:<pnid>:<customer>  list of ids (capped)
 *   :media:<id>             media JSON with the file base64 (7 days)
 *
 * Keys of different slots are never in one command (Redis Cluster): a record
 * is written before the list that names it, and lists are read one GET per
 * record, skipping what is gone.
 */
const MESSAGE_TTL_S = 7 * 24 * 3600;

// KEYS[1]: a conversation's id list. Appends, caps and refreshes its expiry in one step.
const appendToConversationScript = new LuaScript(`
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
`);

// Keep the later time: webhooks and taps may race.
const noteInboundScript = new LuaScript(`
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`);

export function createRedisSandboxState(redis: RedisClient, prefix: string): SandboxState {
  const p = `${prefix}:sbx`;
  return {
    async putAccount(a) {
      await redis.set(`${p}:acct:${a.phoneNumberId}`, JSON.stringify(a));
      await redis.sAdd(`${p}:accts`, a.phoneNumberId);
    },
    async getAccount(pnid) {
      const raw = await redis.get(`${p}:acct:${pnid}`);
      return raw === null ? null : (JSON.parse(raw) as SandboxAccount);
    },
    async accountsOfBusiness(waba) {
      return (await this.listAccounts()).filter((a) => a.businessAccountId === waba);
    },
    async listAccounts() {
      const ids = await redis.sMembers(`${p}:accts`);
      if (ids.length === 0) return [];
      const raws = await getEach(redis, ids.map((id) => `${p}:acct:${id}`));
      return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as SandboxAccount);
    },
    async putTemplate(waba, t) {
      await redis.hSet(`${p}:tpl:${waba}`, `${t.name}\u0000${t.language}`, JSON.stringify(t));
    },
    async listTemplates(waba) {
      return (await redis.hVals(`${p}:tpl:${waba}`))
        .map((r) => JSON.parse(r) as SandboxTemplate)
        .sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
    },
    async getTemplate(waba, name, language) {
      const raw = await redis.hGet(`${p}:tpl:${waba}`, `${name}\u0000${language}`);
      return raw === null || raw === undefined ? null : (JSON.parse(raw) as SandboxTemplate);
    },
    async deleteTemplates(waba, name, language) {
      const doomed = (await this.listTemplates(waba)).filter((t) => t.name === name && (language === undefined || t.language === language));
      if (doomed.length === 0) return 0;
      return redis.hDel(`${p}:tpl:${waba}`, doomed.map((t) => `${t.name}\u0000${t.language}`));
    },
    async noteInbound(pnid, customer, at) {
      await noteInboundScript.run(redis, [`${p}:in:${pnid}:${customer}`], [at]);
    },
    async lastInbound(pnid, customer) {
      const raw = await redis.get(`${p}:in:${pnid}:${customer}`);
      return raw === null ? null : Number(raw);
    },
    async putMessage(m) {
      const conv = `${p}:conv:${m.phoneNumberId}:${m.customer}`;
      const isNew = await redis.set(`${p}:msg:${m.id}`, JSON.stringify(m), { EX: MESSAGE_TTL_S, NX: true });
      if (isNew === null) {
        await redis.set(`${p}:msg:${m.id}`, JSON.stringify(m), { EX: MESSAGE_TTL_S });
        return;
      }
      await appendToConversationScript.run(redis, [conv], [m.id, SANDBOX_CONVERSATION_KEEP, MESSAGE_TTL_S]);
    },
    async updateMessage(m) {
      return (await redis.set(`${p}:msg:${m.id}`, JSON.stringify(m), { EX: MESSAGE_TTL_S, XX: true })) !== null;
    },
    async getMessage(id) {
      const raw = await redis.get(`${p}:msg:${id}`);
      return raw === null ? null : (JSON.parse(raw) as SandboxMessage);
    },
    async conversation(pnid, customer, limit) {
      const ids = await redis.lRange(`${p}:conv:${pnid}:${customer}`, -limit, -1);
      if (ids.length === 0) return [];
      const raws = await getEach(redis, ids.map((id) => `${p}:msg:${id}`));
      return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as SandboxMessage);
    },
    async putMedia(m) {
      await redis.set(`${p}:media:${m.id}`, JSON.stringify(m), { EX: MESSAGE_TTL_S });
    },
    async getMedia(id) {
      const raw = await redis.get(`${p}:media:${id}`);
      return raw === null ? null : (JSON.parse(raw) as SandboxMedia);
    },
  };
}
