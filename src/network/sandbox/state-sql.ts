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
