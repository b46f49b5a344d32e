/**
 * A table for a terminal: a header row naming each column (the API's field
 * names, so a reader can match them to `--json`), then one aligned row per
 * record; `-` for an absent value, `(none)` when there are no rows.
 */
export function table(rows: Record<string, unknown>[], cols: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = [cols, ...rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))))];
  const widths = cols.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}
