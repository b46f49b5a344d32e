import type { Clock } from '../../clock.js';
import type { PgDb, PgQueryable } from '../postgres/db.js';
import { TurnBatches } from '../turn-batches.js';
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

/*
 * The reservations of one organization asked in one turn (JSON array $2: id, amount, n its place
 * from 1, ids distinct), in one statement, as if made one after the other in that order: the balance
 * row locked once; the ids not held yet charged while their running total fits the balance (a
 * prefix, amounts being non-negative), each with its ledger entry and the balance right after it.
 * Answers per request: `spent` (the running total up to and including its own charge) when it was
 * charged, `known` when it was held already, `fits` when its place in the running total fit (one
 * that fit and was not charged was reserved by a racing call just now), and `earlier` (what the
 * requests before it spent). One that did not fit is made again on its own by the caller, after the
 * batch, in order: the balance then tells (a smaller amount behind a refused one may still fit).
 */
const RESERVE_MANY = `
  WITH cur AS (SELECT balance, seq FROM credit_balances WHERE org = $1 FOR UPDATE),
       v AS (SELECT * FROM json_to_recordset($2::json) AS v(id text, amount bigint, n int)),
       known AS (SELECT v.n FROM v JOIN credit_reservations k ON k.org = $1 AND k.id = v.id),
       fresh AS (SELECT v.*, sum(v.amount) OVER (ORDER BY v.n) AS total FROM v WHERE v.n NOT IN (SELECT n FROM known)),
       ok AS (SELECT fresh.* FROM fresh, cur WHERE fresh.total <= cur.balance),
       r AS (INSERT INTO credit_reservations (org, id, amount, state, at) SELECT $1, id, amount, 'reserved', $3 FROM ok ORDER BY n ON CONFLICT DO NOTHING RETURNING id),
       charged AS (SELECT ok.n, ok.id, ok.amount, row_number() OVER (ORDER BY ok.n) AS k, sum(ok.amount) OVER (ORDER BY ok.n) AS spent FROM ok JOIN r ON r.id = ok.id),
       b AS (UPDATE credit_balances c SET balance = cur.balance - (SELECT sum(amount) FROM charged), seq = cur.seq + (SELECT count(*) FROM charged)
             FROM cur WHERE c.org = $1 AND EXISTS (SELECT 1 FROM charged)),
       l AS (INSERT INTO credit_ledger (org, seq, at, kind, amount, balance, reference)
             SELECT $1, cur.seq + charged.k, $4, 'charge', -charged.amount, cur.balance - charged.spent, charged.id FROM charged, cur),
       d AS (DELETE FROM credit_ledger WHERE org = $1 AND seq > (SELECT seq FROM cur) - ${CREDIT_LEDGER_SIZE}
             AND seq <= (SELECT seq FROM cur) + (SELECT count(*) FROM charged) - ${CREDIT_LEDGER_SIZE})
  SELECT EXISTS (SELECT 1 FROM cur) AS has_row, (SELECT balance FROM cur) AS before, charged.spent,
         v.n IN (SELECT n FROM known) AS known, coalesce(fresh.total <= (SELECT balance FROM cur), false) AS fits,
         coalesce((SELECT max(c2.spent) FROM charged c2 WHERE c2.n < v.n), 0) AS earlier
  FROM v LEFT JOIN charged ON charged.n = v.n LEFT JOIN fresh ON fresh.n = v.n
  ORDER BY v.n`;

/** Most reservations one statement makes. */
const MAX_RESERVE_BATCH = 100;

interface Reservation {
  id: string;
  amount: number;
}

type Reserved = { ok: boolean; balance: number };

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

  /** One reservation: one statement (one round trip, atomic on its own) when the balance row exists. */
  const reserveOne = async (org: string, id: string, amount: number): Promise<Reserved> => {
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
  };

  /**
   * A turn's reservations of one organization: the distinct ids in one statement (RESERVE_MANY);
   * then, one at a time and in the order asked, those it could not settle (an id asked twice, one
   * that did not fit, an organization with no balance row yet).
   */
  const reserveMany = async (org: string, items: readonly Reservation[]): Promise<Reserved[]> => {
    if (items.length === 1) return [await reserveOne(org, items[0]!.id, items[0]!.amount)];
    // Each id's first request (`n`: its place from 1); a repeat is made on its own after the statement.
    const batched: (Reservation & { n: number })[] = [];
    const seen = new Set<string>();
    for (const [i, it] of items.entries()) {
      if (seen.has(it.id)) continue;
      seen.add(it.id);
      batched.push({ id: it.id, amount: it.amount, n: i + 1 });
    }
    const rows = await db.rows<{ has_row: boolean; before: string | null; spent: string | null; known: boolean; fits: boolean; earlier: string }>(RESERVE_MANY, [
      org,
      JSON.stringify(batched),
      clock.now(),
      new Date(clock.now()).toISOString(),
    ]);
    const settled = new Map<number, Reserved>();
    rows.forEach((row, i) => {
      const n = batched[i]!.n;
      if (!row.has_row) return;
      const before = Number(row.before);
      if (row.spent !== null) settled.set(n, { ok: true, balance: before - Number(row.spent) });
      else if (row.known || row.fits) settled.set(n, { ok: true, balance: before - Number(row.earlier) });
    });
    const out: Reserved[] = [];
    for (const [i, it] of items.entries()) out.push(settled.get(i + 1) ?? (await reserveOne(org, it.id, it.amount)));
    return out;
  };
  const reservations = new TurnBatches<string, Reservation, Reserved>({
    key: (org) => org,
    send: (org, items) => db.apart(() => reserveMany(org, items)),
    maxSize: MAX_RESERVE_BATCH,
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
      // Inside a unit of work the reservation is one of its writes, committed with them; elsewhere
      // (every send's charge) the reservations of one turn share one statement.
      return db.unitOpen ? reserveOne(org, id, amount) : reservations.add(org, { id, amount });
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
