/**
 * The sandbox providers' own records (Google's and Stripe's stand-ins: users,
 * grants, mail, calendars, checkout sessions…): small key-value collections.
 * Adapters: `sqlite.ts` (a database file of their own, embedded) and
 * `postgres.ts` (the node's PostgreSQL, clustered, so every node serves the
 * same sandbox accounts); `test/tools/sandbox-records.test.ts` runs one
 * contract against both.
 *
 * Guarantees: a write is durable when it resolves; `putIfAbsent` sets a key
 * once across every node sharing the records.
 */
export interface SandboxProviderRecords {
  get<T>(coll: string, key: string): Promise<T | undefined>;
  put(coll: string, key: string, value: unknown): Promise<void>;
  /** Sets the value only when the key is absent; true when it was set. */
  putIfAbsent(coll: string, key: string, value: unknown): Promise<boolean>;
  delete(coll: string, key: string): Promise<void>;
  /** Every value of a collection. */
  values<T>(coll: string): Promise<T[]>;
  /** Keys and values of a collection, only those whose key starts with `prefix` when given, in key order. */
  entries<T>(coll: string, prefix?: string): Promise<[string, T][]>;
  close(): Promise<void>;
}
