import { conflict } from '../../errors.js';
import { getEach, LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import { FreshCache } from '../fresh-cache.js';
import type { SecretBox } from '../secret-box.js';
import { openChannel, sealChannel, type Channel, type ChannelRepo, type StoredChannel, type WhatsAppChannel } from './port.js';

/*
 * Key layout:
 *   <p>:channel:<id>                 sealed channel JSON (global: the webhook receiver looks channels up by id)
 *   <p>:channel-phone:<phoneNumberId> channel id (the claim on the number)
 *   <p>:{o:<org>}:channels           zset of the organization's channel ids, score = creation time
 *
 * The three live in different slots, so a change is single-key steps in an
 * order that keeps the phone number unique (Redis Cluster refuses a script
 * across slots). Create: the record (SET NX), then the claim on its number,
 * then the organization's list; a lost claim deletes the record again before
 * the 409. Delete: the record, the claim (only if still this channel's), the
 * list entry. A claim whose channel record is gone (a delete or create cut
 * short) is taken over; list entries whose record is gone are skipped.
 */

// KEYS[1]: the phone claim. ARGV: channel id, the id the caller saw holding it ('' = none). 1 = now ours.
const claimPhoneScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then return 1 end
if (cur or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`);

// KEYS[1]: the phone claim. Drops it only if it is still this channel's.
const releasePhoneScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

const MAX_CLAIM_ATTEMPTS = 10;
/** How long a channel read stays good for the hot paths (a change on another node shows within it). */
const FRESH_MS = 1_000;

export function createRedisChannelRepo(redis: RedisClient, prefix: string, box: SecretBox | null): ChannelRepo {
  const channelKey = (id: string) => `${prefix}:channel:${id}`;
  const phoneKey = (pnid: string) => `${prefix}:channel-phone:${pnid}`;
  const listKey = (org: string) => orgKeys(prefix, org)('channels');
  // Opening costs three AES-GCM decryptions: cache by the stored text, which
  // changes whenever the channel does.
  const opened = new Map<string, Channel>();
  const open = (raw: string): Channel => {
    let c = opened.get(raw);
    if (c === undefined) {
      c = openChannel(JSON.parse(raw) as StoredChannel, box);
      if (opened.size >= 1000) opened.clear();
      opened.set(raw, c);
    }
    return c;
  };
  /** Claims the number for the channel: true once it holds the claim, false when a live channel holds it. */
  const claimPhone = async (pnid: string, id: string): Promise<boolean> => {
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      const holder = (await redis.get(phoneKey(pnid))) ?? '';
      if (holder !== '' && holder !== id && (await redis.exists(channelKey(holder))) === 1) return false;
      if (Number(await claimPhoneScript.run(redis, [phoneKey(pnid)], [id, holder])) === 1) return true;
    }
    throw conflict('phone_number_in_use', 'the phone number id is being claimed by others; try again');
  };
  // Every send reads its channel twice (the API, then the contact's actor) and every status
  // webhook once: a channel read in the last FRESH_MS is taken from memory. A change made on this
  // node is seen at once (dropped below); one made on another node within FRESH_MS. A missing
  // channel is never remembered, so a new one is found at once.
  const fresh = new FreshCache<Channel | null>(FRESH_MS);
  const freshPhones = new FreshCache<string | null>(FRESH_MS);
  const read = (id: string): Promise<Channel | null> =>
    fresh.get(
      id,
      async () => {
        const raw = await redis.get(channelKey(id));
        return raw === null ? null : open(raw);
      },
      (c) => c !== null,
    );
  const forget = (id: string) => {
    fresh.forget((k) => k === id);
    freshPhones.forget();
  };
  return {
    async create(channel) {
      const key = channelKey(channel.id);
      if ((await redis.set(key, JSON.stringify(sealChannel(channel, box)), { NX: true })) === null) throw conflict('channel_exists', 'a channel with this id exists');
      if (channel.kind === 'whatsapp_cloud' && !(await claimPhone(channel.phoneNumberId, channel.id))) {
        await redis.del(key);
        throw conflict('phone_number_in_use', 'another channel already uses this phone number id');
      }
      await redis.zAdd(listKey(channel.organizationId), { score: Date.parse(channel.createdAt), value: channel.id });
    },
    async get(organizationId, id) {
      const c = await read(id);
      return c !== null && c.organizationId === organizationId ? c : null;
    },
    getGlobal: read,
    async getByPhoneNumberId(phoneNumberId) {
      const id = await freshPhones.get(phoneNumberId, () => redis.get(phoneKey(phoneNumberId)), (v) => v !== null);
      const c = id === null ? null : await read(id);
      return c?.kind === 'whatsapp_cloud' ? (c as WhatsAppChannel) : null;
    },
    async list(organizationId) {
      const ids = await redis.zRange(listKey(organizationId), 0, -1);
      if (ids.length === 0) return [];
      const raws = await getEach(redis, ids.map(channelKey));
      return raws
        .filter((r): r is string => r !== null)
        .map(open)
        .filter((c) => c.organizationId === organizationId);
    },
    async update(channel) {
      const cur = await read(channel.id);
      if (cur === null || cur.organizationId !== channel.organizationId || cur.kind !== channel.kind) return;
      forget(channel.id);
      await redis.set(channelKey(channel.id), JSON.stringify(sealChannel(channel, box)), { XX: true });
      forget(channel.id);
    },
    async delete(organizationId, id) {
      const cur = await read(id);
      if (cur === null || cur.organizationId !== organizationId) return false;
      forget(id);
      await redis.del(channelKey(id));
      forget(id);
      if (cur.kind === 'whatsapp_cloud') await releasePhoneScript.run(redis, [phoneKey(cur.phoneNumberId)], [id]);
      await redis.zRem(listKey(organizationId), id);
      return true;
    },
  };
}
