import { conflict } from '../errors.js';
import type { EmbeddedDb } from './embedded-db.js';
import type { SecretBox } from './secret-box.js';
import { openChannel, sealChannel, type Channel, type ChannelRepo, type StoredChannel, type WhatsAppChannel } from './channel-types.js';

/** Channels in the embedded db: `channels` by id, `channelPhones` phone number id → channel id. */
export function createEmbeddedChannelRepo(db: EmbeddedDb, box: SecretBox | null): ChannelRepo {
  // Opening costs three AES-GCM decryptions; stored values are immutable, so
  // the opened channel is cached per stored object (an update stores a new one).
  const opened = new WeakMap<StoredChannel, Channel>();
  const open = (s: StoredChannel): Channel => {
    let c = opened.get(s);
    if (c === undefined) {
      c = openChannel(s, box);
      opened.set(s, c);
    }
    return c;
  };
  const read = (id: string): Channel | null => {
    const s = db.get<StoredChannel>('channels', id);
    return s === undefined ? null : open(s);
  };
  return {
    async create(channel) {
      if (db.has('channels', channel.id)) throw conflict('channel_exists', 'a channel with this id exists');
      const ops: Parameters<EmbeddedDb['write']>[0] = [{ coll: 'channels', key: channel.id, value: sealChannel(channel, box) }];
      if (channel.kind === 'whatsapp_cloud') {
        if (db.has('channelPhones', channel.phoneNumberId)) {
          throw conflict('phone_number_in_use', 'another channel already uses this phone number id');
        }
        ops.push({ coll: 'channelPhones', key: channel.phoneNumberId, value: channel.id });
      }
      await db.write(ops);
    },
    async get(organizationId, id) {
      const c = read(id);
      return c !== null && c.organizationId === organizationId ? c : null;
    },
    async getGlobal(id) {
      return read(id);
    },
    async getByPhoneNumberId(phoneNumberId) {
      const id = db.get<string>('channelPhones', phoneNumberId);
      const c = id === undefined ? null : read(id);
      return c?.kind === 'whatsapp_cloud' ? (c as WhatsAppChannel) : null;
    },
    async list(organizationId) {
      return [...db.values<StoredChannel>('channels')]
        .filter((c) => c.organizationId === organizationId)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        .map(open);
    },
    async update(channel) {
      const cur = db.get<StoredChannel>('channels', channel.id);
      if (cur === undefined || cur.organizationId !== channel.organizationId || cur.kind !== channel.kind) return;
      await db.put('channels', channel.id, sealChannel(channel, box));
    },
    async delete(organizationId, id) {
      const cur = db.get<StoredChannel>('channels', id);
      if (cur === undefined || cur.organizationId !== organizationId) return false;
      const ops: Parameters<EmbeddedDb['write']>[0] = [{ coll: 'channels', key: id, delete: true }];
      if (cur.kind === 'whatsapp_cloud') ops.push({ coll: 'channelPhones', key: cur.phoneNumberId, delete: true });
      await db.write(ops);
      return true;
    },
  };
}
