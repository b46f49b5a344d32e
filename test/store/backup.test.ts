import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/admin.js';
import { createSqliteStore, NODE_MIGRATIONS, openNodeDbIn, SqliteDb } from '../../src/store/index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('npm run admin -- backup', () => {
  it('copies the database while it is open and being written, into a 0600 file that opens with the same data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-backup-'));
    dirs.push(dir);
    const live = openNodeDbIn(dir);
    const store = createSqliteStore(live);
    for (let i = 0; i < 50; i++) await store.organizations.create({ id: `o${i}`, name: `Org ${i}`, createdAt: new Date(1_700_000_000_000 + i).toISOString() });
    const lines: string[] = [];
    const errors: string[] = [];
    const out = join(dir, 'copy.db');
    // Writes keep coming while the backup runs (the service is up).
    const writing = (async () => {
      for (let i = 50; i < 100; i++) await store.organizations.create({ id: `o${i}`, name: `Org ${i}`, createdAt: new Date(1_700_000_000_000 + i).toISOString() });
    })();
    const code = await main(['backup', '--out', out, '--data-dir', dir], {}, (s) => lines.push(s), (s) => errors.push(s));
    await writing;
    expect(errors).toEqual([]);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/written to .*copy\.db \(\d+ bytes, schema \d+, integrity ok\)/);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const copy = createSqliteStore(SqliteDb.open(out, { migrations: NODE_MIGRATIONS }));
    const names = (await copy.organizations.list()).map((o) => o.name);
    expect(names.length).toBeGreaterThanOrEqual(50);
    expect(names.slice(0, 50)).toEqual(Array.from({ length: 50 }, (_, i) => `Org ${i}`));
    await copy.close();
    await store.close();
  });

  it('refuses without a database, or over an existing file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-backup-'));
    dirs.push(dir);
    const errors: string[] = [];
    expect(await main(['backup', '--out', join(dir, 'x.db'), '--data-dir', join(dir, 'none')], {}, () => {}, (s) => errors.push(s))).toBe(1);
    expect(errors[0]).toMatch(/no database at .*switchboard\.db/);
    await openNodeDbIn(dir).close();
    expect(await main(['backup', '--out', join(dir, 'switchboard.db'), '--data-dir', dir], {}, () => {}, (s) => errors.push(s))).toBe(1);
    expect(errors[1]).toMatch(/exists: choose a new file name/);
    expect(await main(['backup'], {}, () => {}, (s) => errors.push(s))).toBe(2);
  });
});
