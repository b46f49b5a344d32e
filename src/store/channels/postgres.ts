import { conflict } from '../../errors.js';
import { FreshCache } from '../fresh-cache.js';
import type { PgDb } from '../postgres/db.js';
import type { SecretBox } from '../secret-box.js';
import { openChannel, sealChannel, type Channel, type ChannelRepo, type StoredChannel, type WhatsAppChannel } from './port.js';

/** How long a channel read stays good for the hot paths (a change on another node shows within it). */
const FRESH_MS = 1_000;

/**
 * Channels in the `channels` table, the sealed channel as its body. The
 * unique `phone_number_id` column is the claim on a number: of racing
 * creates with the same number exactly one inserts, in any organization.
 */
export function createPostgresChannelRepo(db: PgDb, box: SecretBox | null): ChannelRepo {
  // Opening costs three AES-GCM decryptions: cache by the stored text, which
  // changes whenever the channel does (the body is read as text for that).
  const opened = new Map<string, Channel>();
  const open = (text: string): Channel => {
    let c = opened.get(text);
    if (c === undefined) {
      c = openChannel(JSON.parse(text) as StoredChannel, box);
      if (opened.size >= 1000) opened.clear();
      opened.set(text, c);
    }
    return c;
  };
  const one = async (where: string, arg: string): Promise<Channel | null> => {
    const rows = await db.rows<{ body: string }>(`SELECT body::text AS body FROM channels WHERE ${where} = $1`, [arg]);
    return rows[0] === undefined ? null : open(rows[0].body);
  };
  // Every send reads its channel twice (the API, then the contact's actor) and every status
  // webhook once: a channel read in the last FRESH_MS is taken from memory, by id (`i:`) and by
  // phone number id (`p:`). A change made on this node is seen at once (forgotten after the
  // write); one made on another node within FRESH_MS. A missing channel is never remembered, so
  // a new one is found at once.
  const fresh = new FreshCache<Channel | null>(FRESH_MS);
  const read = (id: string) => fresh.get(`i:${id}`, () => one('id', id), (c) => c !== null);
  const forget = (id: string) => fresh.forget((k, c) => k === `i:${id}` || c?.id === id);
  return {
    async create(channel) {
      const pnid = channel.kind === 'whatsapp_cloud' ? channel.phoneNumberId : null;
      try {
        await db.query('INSERT INTO channels (id, org, phone_number_id, kind, created_at, body) VALUES ($1, $2, $3, $4, $5, $6)', [
          channel.id,
          channel.organizationId,
          pnid,
          channel.kind,
          channel.createdAt,
          JSON.stringify(sealChannel(channel, box)),
        ]);
      } catch (e) {
        const err = e as { code?: string; constraint?: string };
        if (err.code !== '23505') throw e;
        if (err.constraint === 'channels_pkey') throw conflict('channel_exists', 'a channel with this id exists');
        throw conflict('phone_number_in_use', 'another channel already uses this phone number id');
      }
      forget(channel.id);
    },
    async get(organizationId, id) {
      const c = await read(id);
      return c !== null && c.organizationId === organizationId ? c : null;
    },
    getGlobal: read,
    async getByPhoneNumberId(phoneNumberId) {
      const c = await fresh.get(`p:${phoneNumberId}`, () => one('phone_number_id', phoneNumberId), (v) => v !== null);
      return c?.kind === 'whatsapp_cloud' ? (c as WhatsAppChannel) : null;
    },
    async list(organizationId) {
      const rows = await db.rows<{ body: string }>('SELECT body::text AS body FROM channels WHERE org = $1 ORDER BY created_at, id', [organizationId]);
      return rows.map((r) => open(r.body));
    },
    async update(channel) {
      // Same organization, kind and number, or nothing: the row's columns are the stored channel's.
      const pnid = channel.kind === 'whatsapp_cloud' ? channel.phoneNumberId : null;
      forget(channel.id);
      await db.query('UPDATE channels SET body = $5 WHERE id = $1 AND org = $2 AND kind = $3 AND phone_number_id IS NOT DISTINCT FROM $4', [
        channel.id,
        channel.organizationId,
        channel.kind,
        pnid,
        JSON.stringify(sealChannel(channel, box)),
      ]);
      forget(channel.id);
    },
    async delete(organizationId, id) {
      forget(id);
      const r = await db.query('DELETE FROM channels WHERE id = $1 AND org = $2', [id, organizationId]);
      forget(id);
      return r.rowCount === 1;
    },
  };
}
