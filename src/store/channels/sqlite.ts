import { conflict } from '../../errors.js';
import type { SqliteDb, WriteOp } from '../sqlite/db.js';
import type { SecretBox } from '../secret-box.js';
import { openChannel, sealChannel, type Channel, type ChannelRepo, type StoredChannel, type WhatsAppChannel } from './port.js';

/** Channels in the node's SQLite database: `channels` by id, `channelPhones` phone number id → channel id. */
export function createSqliteChannelRepo(db: SqliteDb, box: SecretBox | null): ChannelRepo {
  // Opening costs three AES-GCM decryptions (every send reads its channel), so
  // the opened channel is cached by id, valid while the stored text is the same.
  const opened = new Map<string, { text: string; channel: Channel }>();
  const open = (s: StoredChannel): Channel => openChannel(s, box);
  const read = (id: string): Channel | null => {
    const text = db.getRaw('channels', id);
    if (text === undefined) {
      opened.delete(id);
      return null;
    }
    const hit = opened.get(id);
    if (hit !== undefined && hit.text === text) return hit.channel;
    const channel = open(JSON.parse(text) as StoredChannel);
    if (opened.size > 10_000) opened.clear();
    opened.set(id, { text, channel });
    return channel;
  };
  return {
    async create(channel) {
      if (db.has('channels', channel.id)) throw conflict('channel_exists', 'a channel with this id exists');
      const ops: WriteOp[] = [{ coll: 'channels', key: channel.id, value: sealChannel(channel, box) }];
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
      const ops: WriteOp[] = [{ coll: 'channels', key: id, delete: true }];
      if (cur.kind === 'whatsapp_cloud') ops.push({ coll: 'channelPhones', key: cur.phoneNumberId, delete: true });
      await db.write(ops);
      return true;
    },
  };
}
