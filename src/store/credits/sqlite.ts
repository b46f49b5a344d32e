import type { Clock } from '../../clock.js';
import type { SqliteDb, WriteOp } from '../sqlite/db.js';
import { CREDIT_LEDGER_SIZE, CREDIT_RECORD_TTL_MS, type CreditEntry, type CreditRepo } from './port.js';

interface Reservation {
  amount: number;
  state: 'reserved' | 'refunded';
  at: number;
}

/**
 * Credits in the node's SQLite database. One process, and each check-and-change runs
 * without an await in between (the db applies writes in memory at once), so
 * no two sends can both pass the balance check on the same credits.
 */
export function createSqliteCreditRepo(db: SqliteDb, clock: Clock): CreditRepo {
  const bal = (org: string) => db.get<number>('credits', org) ?? 0;
  const resKey = (org: string, id: string) => `${org}/${id}`;
  // The ledger: entries keyed `<org>/<seq>`, written in the batch of their change; the entry
  // CREDIT_LEDGER_SIZE places back is deleted in the same batch.
  const seqOf = (org: string) => db.get<number>('creditLedgerSeq', org) ?? 0;
  const entry = (org: string, kind: CreditEntry['kind'], amount: number, balance: number, reference: string | undefined): WriteOp[] => {
    const seq = seqOf(org) + 1;
    const value: CreditEntry = { at: new Date(clock.now()).toISOString(), kind, amount, balance, reference: reference ?? null };
    const ops: WriteOp[] = [
      { coll: 'creditLedgerSeq', key: org, value: seq },
      { coll: 'creditLedger', key: `${org}/${seq}`, value },
    ];
    if (db.has('creditLedger', `${org}/${seq - CREDIT_LEDGER_SIZE}`)) ops.push({ coll: 'creditLedger', key: `${org}/${seq - CREDIT_LEDGER_SIZE}`, delete: true });
    return ops;
  };

  // Forget old reservations and top-up ids at start, as Redis expires them.
  const cutoff = clock.now() - CREDIT_RECORD_TTL_MS;
  const stale: WriteOp[] = [];
  for (const [k, r] of db.entries<Reservation>('creditRes')) if (r.at < cutoff) stale.push({ coll: 'creditRes', key: k, delete: true });
  for (const [k, at] of db.entries<number>('creditTopUps')) if (at < cutoff) stale.push({ coll: 'creditTopUps', key: k, delete: true });
  if (stale.length > 0) void db.write(stale);

  return {
    async balance(org) {
      return bal(org);
    },
    async history(org, limit) {
      const out: CreditEntry[] = [];
      for (let seq = seqOf(org); seq > 0 && out.length < limit; seq--) {
        const e = db.get<CreditEntry>('creditLedger', `${org}/${seq}`);
        if (e === undefined) break;
        out.push(e);
      }
      return out;
    },
    async topUp(org, amount, operationId) {
      if (operationId !== undefined && db.has('creditTopUps', resKey(org, operationId))) return { balance: bal(org), applied: false };
      const next = bal(org) + amount;
      const ops: WriteOp[] = [{ coll: 'credits', key: org, value: next }, ...entry(org, 'top_up', amount, next, operationId)];
      if (operationId !== undefined) ops.push({ coll: 'creditTopUps', key: resKey(org, operationId), value: clock.now() });
      await db.write(ops);
      return { balance: next, applied: true };
    },
    async reserve(org, id, amount) {
      const existing = db.get<Reservation>('creditRes', resKey(org, id));
      if (existing !== undefined) return { ok: true, balance: bal(org) };
      const cur = bal(org);
      if (cur < amount) return { ok: false, balance: cur };
      const next = cur - amount;
      await db.write([
        { coll: 'credits', key: org, value: next },
        { coll: 'creditRes', key: resKey(org, id), value: { amount, state: 'reserved', at: clock.now() } satisfies Reservation },
        ...entry(org, 'charge', -amount, next, id),
      ]);
      return { ok: true, balance: next };
    },
    async refund(org, id) {
      const r = db.get<Reservation>('creditRes', resKey(org, id));
      if (r === undefined || r.state !== 'reserved') return { refunded: false, balance: bal(org) };
      const next = bal(org) + r.amount;
      await db.write([
        { coll: 'credits', key: org, value: next },
        { coll: 'creditRes', key: resKey(org, id), value: { ...r, state: 'refunded' } satisfies Reservation },
        ...entry(org, 'refund', r.amount, next, id),
      ]);
      return { refunded: true, balance: next };
    },
    async release(org, id) {
      const r = db.get<Reservation>('creditRes', resKey(org, id));
      if (r === undefined || r.state !== 'reserved') return { released: false, balance: bal(org) };
      const next = bal(org) + r.amount;
      await db.write([
        { coll: 'credits', key: org, value: next },
        { coll: 'creditRes', key: resKey(org, id), delete: true },
        ...entry(org, 'release', r.amount, next, id),
      ]);
      return { released: true, balance: next };
    },
  };
}
