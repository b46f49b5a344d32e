import type { SandboxCustomer, SandboxState } from './state.js';

/**
 * The statements of the sandbox network's message history that its SQLite
 * and PostgreSQL adapters share (`?` placeholders): a table of `seq` (the
 * order), `id`, `pair` (`<phone number id>/<customer>`) and `body`, named
 * `table`.
 */
export function sandboxMessageSql(table: string) {
  return {
    update: `UPDATE ${table} SET body = ? WHERE id = ?`,
    get: `SELECT body FROM ${table} WHERE id = ?`,
    /** The newest `limit` of a pair, newest first. */
    latest: `SELECT body FROM ${table} WHERE pair = ? ORDER BY seq DESC LIMIT ?`,
    /** Drops what is older than the pair's newest `keep`. Args: pair, pair, keep. */
    trim: `DELETE FROM ${table} WHERE pair = ? AND seq <= (SELECT seq FROM ${table} WHERE pair = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
  };
}

/** A key-value collection store, as both node databases keep one (`records`). */
interface KeyValueRecords {
  get<T>(coll: string, key: string): T | undefined | Promise<T | undefined>;
  put(coll: string, key: string, value: unknown): Promise<void>;
}

/**
 * The sandbox network's WhatsApp users, the same on both adapters: each by
 * `<business account>/<BSUID>`, and their number pointing at the BSUID.
 */
export function sandboxCustomerRecords(db: KeyValueRecords): Pick<SandboxState, 'putCustomer' | 'getCustomer' | 'customerByPhone'> {
  const getCustomer = async (waba: string, userId: string) => (await db.get<SandboxCustomer>('sbxCustomers', `${waba}/${userId}`)) ?? null;
  return {
    async putCustomer(c) {
      await db.put('sbxCustomers', `${c.businessAccountId}/${c.userId}`, c);
      if (c.phone !== undefined) await db.put('sbxCustomerPhones', `${c.businessAccountId}/${c.phone}`, c.userId);
    },
    getCustomer,
    async customerByPhone(waba, phone) {
      const userId = await db.get<string>('sbxCustomerPhones', `${waba}/${phone}`);
      return userId === undefined ? null : getCustomer(waba, userId);
    },
  };
}
