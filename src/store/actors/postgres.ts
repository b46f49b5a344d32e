import type { PgDb } from '../postgres/db.js';
import type { ActorReplyStore, ActorStateRef } from './port.js';

/**
 * The replies of applied commands in PostgreSQL (`actor_replies`), each kept
 * for `ttlMs`. `prune()` deletes expired rows a batch at a time; every node
 * may run it (deleting an expired row twice is harmless).
 */
export class PostgresActorReplyStore implements ActorReplyStore {
  constructor(
    private readonly db: PgDb,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async put(ref: ActorStateRef, keyDigest: string, reply: unknown, epoch: number): Promise<void> {
    await this.db.query(
      'INSERT INTO actor_replies (actor, key_digest, reply, expires_at, epoch) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (actor, key_digest) DO UPDATE SET reply = excluded.reply, expires_at = excluded.expires_at, epoch = excluded.epoch WHERE actor_replies.epoch <= excluded.epoch',
      [actorOf(ref), keyDigest, JSON.stringify(reply ?? null), this.now() + this.ttlMs, epoch],
    );
  }

  async get(ref: ActorStateRef, keyDigest: string): Promise<{ reply: unknown } | null> {
    const rows = await this.db.rows<{ reply: unknown }>('SELECT reply FROM actor_replies WHERE actor = $1 AND key_digest = $2 AND expires_at > $3', [actorOf(ref), keyDigest, this.now()]);
    return rows.length === 0 ? null : { reply: rows[0]!.reply };
  }

  /** Deletes up to `limit` expired replies; answers how many. */
  async prune(limit = 1000): Promise<number> {
    const r = await this.db.query('DELETE FROM actor_replies WHERE ctid IN (SELECT ctid FROM actor_replies WHERE expires_at <= $1 LIMIT $2)', [this.now(), limit]);
    return r.rowCount ?? 0;
  }
}

const actorOf = (ref: ActorStateRef) => `${ref.type}/${ref.key}`;
