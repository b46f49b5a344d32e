import { conflict } from '../errors.js';
import { LuaScript, orgKeys, type RedisClient } from './redis-client.js';
import type { SecretBox } from './secret-box.js';
import { openChannel, sealChannel, type Channel, type ChannelRepo, type StoredChannel, type WhatsAppChannel } from './channel-types.js';

/*
 * Key layout:
 *   <p>:channel:<id>                 sealed channel JSON (global: the webhook receiver looks channels up by id)
 *   <p>:channel-phone:<phoneNumberId> channel id
 *   <p>:{o:<org>}:channels           zset of the organization's channel ids, score = creation time
 */

// Claims the phone number and stores the channel in one step, so two
// operators racing for the same number cannot both win.
const createScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if KEYS[2] ~= KEYS[1] then
  if redis.call('SET', KEYS[2], ARGV[1], 'NX') == false then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
`);

const deleteScript = new LuaScript(`
redis.call('DEL', KEYS[1])
if KEYS[2] ~= KEYS[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
`);

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
  const read = async (id: string): Promise<Channel | null> => {
    const raw = await redis.get(channelKey(id));
    return raw === null ? null : open(raw);
  };
  return {
    async create(channel) {
      const phone = channel.kind === 'whatsapp_cloud' ? phoneKey(channel.phoneNumberId) : channelKey(channel.id);
      const r = Number(
        await createScript.run(redis, [channelKey(channel.id), phone, listKey(channel.organizationId)], [
          channel.id,
          JSON.stringify(sealChannel(channel, box)),
          Date.parse(channel.createdAt),
        ]),
      );
      if (r === -1) throw conflict('channel_exists', 'a channel with this id exists');
      if (r === 0) throw conflict('phone_number_in_use', 'another channel already uses this phone number id');
    },
    async get(organizationId, id) {
      const c = await read(id);
      return c !== null && c.organizationId === organizationId ? c : null;
    },
    getGlobal: read,
    async getByPhoneNumberId(phoneNumberId) {
      const id = await redis.get(phoneKey(phoneNumberId));
      const c = id === null ? null : await read(id);
      return c?.kind === 'whatsapp_cloud' ? (c as WhatsAppChannel) : null;
    },
    async list(organizationId) {
      const ids = await redis.zRange(listKey(organizationId), 0, -1);
      if (ids.length === 0) return [];
      const raws = await redis.mGet(ids.map(channelKey));
      return raws
        .filter((r): r is string => r !== null)
        .map(open)
        .filter((c) => c.organizationId === organizationId);
    },
    async update(channel) {
      const cur = await read(channel.id);
      if (cur === null || cur.organizationId !== channel.organizationId || cur.kind !== channel.kind) return;
      await redis.set(channelKey(channel.id), JSON.stringify(sealChannel(channel, box)), { XX: true });
    },
    async delete(organizationId, id) {
      const cur = await read(id);
      if (cur === null || cur.organizationId !== organizationId) return false;
      const phone = cur.kind === 'whatsapp_cloud' ? phoneKey(cur.phoneNumberId) : channelKey(id);
      await deleteScript.run(redis, [channelKey(id), phone, listKey(organizationId)], [id]);
      return true;
    },
  };
}
