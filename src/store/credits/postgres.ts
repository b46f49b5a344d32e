import type { Clock } from '../../clock.js';
import type { PgDb, PgQueryable } from '../postgres/db.js';
import { CREDIT_LEDGER_SIZE, CREDIT_RECORD_TTL_MS, type CreditEntry, type CreditRepo } from './port.js';

/*
 * A reservation in one statement: the balance row locked (FOR UPDATE reads its latest committed
 * version, so concurrent reservations serialize on it), then, when the id is new and the balance
 * covers the amount, the reservation, the new balance and its ledger entry (the entry
 * CREDIT_LEDGER_SIZE places back leaves). An id reserved by a racing call meanwhile makes the
 * insert a no-op and nothing else changes. No balance row yet: `has_row` is false and the caller
 * takes the transactional path, which creates it.
 */
const RESERVE = `
  WITH cur AS (SELECT balance, seq FROM credit_balances WHERE org = $1 FOR UPDATE),
       known AS (SELECT 1 FROM credit_reservations WHERE org = $1 AND id = $2),
       ok AS (SELECT balance, seq FROM cur WHERE NOT EXISTS (SELECT 1 FROM known) AND balance >= $3),
       r AS (INSERT INTO credit_reservations (org, id, amount, state, at) SELECT $1, $2, $3, 'reserved', $4 FROM ok ON CONFLICT DO NOTHING RETURNING 1),
       b AS (UPDATE credit_balances c SET balance = ok.balance - $3, seq = ok.seq + 1 FROM ok, r WHERE c.org = $1 RETURNING c.balance, c.seq),
       l AS (INSERT INTO credit_ledger (org, seq, at, kind, amount, balance, reference) SELECT $1, b.seq, $5, 'charge', -$3, b.balance, $2 FROM b),
       d AS (DELETE FROM credit_ledger WHERE org = $1 AND seq = (SELECT seq FROM b) - ${CREDIT_LEDGER_SIZE})
  SELECT EXISTS (SELECT 1 FROM cur) AS has_row, (SELECT balance FROM cur) AS before, (SELECT balance FROM b) AS after,
         EXISTS (SELECT 1 FROM known) AS known, EXISTS (SELECT 1 FROM ok) AS fits`;

interface Locked {
  balance: number;
  seq: number;
}

/**
 * Credits in PostgreSQL: `credit_balances` (the balance and its ledger's
 * sequence), `credit_ledger`, `credit_reservations` and `credit_top_ups`.
 *
 * Every change runs in one transaction that first locks the organization's
 * balance row, so an organization's changes are serialized: the checks
 * (balance covers the amount, the reservation is held, the top-up id is new)
 * read what the previous change committed, and the balance, the reservation
 * and the ledger entry commit together or not at all.
 */
export function createPostgresCreditRepo(db: PgDb, clock: Clock): CreditRepo {
  /** The balance row, locked until the transaction ends (created at zero the first time). */
  const lock = async (q: PgQueryable, org: string): Promise<Locked> => {
    for (;;) {
      const r = await q.query<{ balance: string; seq: string }>('SELECT balance, seq FROM credit_balances WHERE org = $1 FOR UPDATE', [org]);
      if (r.rows[0] !== undefined) return { balance: Number(r.rows[0].balance), seq: Number(r.rows[0].seq) };
      await q.query('INSERT INTO credit_balances (org, balance, seq) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING', [org]);
    }
  };
  /** The new balance and its ledger entry (the one CREDIT_LEDGER_SIZE places back leaves), in one statement. */
  const change = async (q: PgQueryable, org: string, cur: Locked, kind: CreditEntry['kind'], amount: number, reference: string | undefined): Promise<number> => {
    const balance = cur.balance + amount;
    const seq = cur.seq + 1;
    await q.query(
      `WITH b AS (UPDATE credit_balances SET balance = $2, seq = $3 WHERE org = $1),
            l AS (INSERT INTO credit_ledger (org, seq, at, kind, amount, balance, reference) VALUES ($1, $3, $4, $5, $6, $2, $7))
       DELETE FROM credit_ledger WHERE org = $1 AND seq = $3 - ${CREDIT_LEDGER_SIZE}`,
      [org, balance, seq, new Date(clock.now()).toISOString(), kind, amount, reference ?? null],
    );
    return balance;
  };
  /** Gives a held reservation back: `refund` remembers it as refunded, `release` forgets it. */
  const giveBack = (org: string, id: string, kind: 'refund' | 'release') =>
    db.tx(async (q) => {
      const cur = await lock(q, org);
      const held = await q.query<{ amount: string }>(
        kind === 'refund'
          ? "UPDATE credit_reservations SET state = 'refunded' WHERE org = $1 AND id = $2 AND state = 'reserved' RETURNING amount"
          : "DELETE FROM credit_reservations WHERE org = $1 AND id = $2 AND state = 'reserved' RETURNING amount",
        [org, id],
      );
      const amount = held.rows[0]?.amount;
      if (amount === undefined) return { done: false, balance: cur.balance };
      return { done: true, balance: await change(q, org, cur, kind, Number(amount), id) };
    });

  // Reservations and top-up ids are remembered CREDIT_RECORD_TTL_MS: older ones leave at start
  // (as the embedded adapter does), in small batches so no start holds many locks.
  void (async () => {
    const cutoff = clock.now() - CREDIT_RECORD_TTL_MS;
    for (const table of ['credit_reservations', 'credit_top_ups']) {
      while ((await db.query(`DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE at < $1 LIMIT 1000)`, [cutoff])).rowCount === 1000);
    }
  })().catch(() => {});

  return {
    async balance(org) {
      const rows = await db.rows<{ balance: string }>('SELECT balance FROM credit_balances WHERE org = $1', [org]);
      return Number(rows[0]?.balance ?? 0);
    },
    async history(org, limit) {
      const rows = await db.rows<{ at: string; kind: CreditEntry['kind']; amount: string; balance: string; reference: string | null }>(
        'SELECT at, kind, amount, balance, reference FROM credit_ledger WHERE org = $1 ORDER BY seq DESC LIMIT $2',
        [org, Math.max(0, Math.min(limit, CREDIT_LEDGER_SIZE))],
      );
      return rows.map((r) => ({ at: r.at, kind: r.kind, amount: Number(r.amount), balance: Number(r.balance), reference: r.reference }));
    },
    async topUp(org, amount, operationId) {
      return db.tx(async (q) => {
        const cur = await lock(q, org);
        if (operationId !== undefined) {
          const claimed = await q.query('INSERT INTO credit_top_ups (org, id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [org, operationId, clock.now()]);
          if (claimed.rowCount !== 1) return { balance: cur.balance, applied: false };
        }
        return { balance: await change(q, org, cur, 'top_up', amount, operationId), applied: true };
      });
    },
    async reserve(org, id, amount) {
      // Every send reserves: one statement (one round trip, atomic on its own) when the balance row exists.
      const r = await db.rows<{ has_row: boolean; before: string | null; after: string | null; known: boolean; fits: boolean }>(RESERVE, [
        org,
        id,
        amount,
        clock.now(),
        new Date(clock.now()).toISOString(),
      ]);
      const row = r[0]!;
      if (row.has_row) {
        const before = Number(row.before);
        if (row.after !== null) return { ok: true, balance: Number(row.after) };
        // Held or refunded (this send was charged already), or reserved by a racing call with the same id just now.
        if (row.known || row.fits) return { ok: true, balance: before };
        return { ok: false, balance: before };
      }
      return db.tx(async (q) => {
        const cur = await lock(q, org);
        const known = await q.query('SELECT 1 FROM credit_reservations WHERE org = $1 AND id = $2', [org, id]);
        if (known.rowCount === 1) return { ok: true, balance: cur.balance };
        if (cur.balance < amount) return { ok: false, balance: cur.balance };
        await q.query("INSERT INTO credit_reservations (org, id, amount, state, at) VALUES ($1, $2, $3, 'reserved', $4)", [org, id, amount, clock.now()]);
        return { ok: true, balance: await change(q, org, cur, 'charge', -amount, id) };
      });
    },
    async refund(org, id) {
      const r = await giveBack(org, id, 'refund');
      return { refunded: r.done, balance: r.balance };
    },
    async release(org, id) {
      const r = await giveBack(org, id, 'release');
      return { released: r.done, balance: r.balance };
    },
  };
}
