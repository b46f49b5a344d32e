import { describe, expect, it } from 'vitest';
import { openKeyValueDb } from '../../src/store/backing.js';
import type { SandboxProviderRecords } from '../../src/store/sandbox-providers/port.js';
import { createSqliteSandboxProviderRecords } from '../../src/store/sandbox-providers/sqlite.js';
import { createPostgresSandboxProviderRecords } from '../../src/store/sandbox-providers/postgres.js';
import { usePostgres } from '../harness/use-postgres.js';

/** The sandbox providers' records (see `SandboxProviderRecords`), for every adapter. */
function runSandboxRecordsContract(name: string, create: () => Promise<{ records: SandboxProviderRecords; otherNode: SandboxProviderRecords }>): void {
  describe(`sandbox provider records: ${name}`, () => {
    it('gets, puts, deletes; lists a collection and the entries under a key prefix (wildcards are literal)', async () => {
      const { records: r } = await create();
      expect(await r.get('sbMail', 'a@x/1')).toBeUndefined();
      await r.put('sbMail', 'a@x/1', { n: 1 });
      await r.put('sbMail', 'a@x/2', { n: 2 });
      await r.put('sbMail', 'a_x/3', { n: 3 });
      await r.put('sbMail', 'b@x/1', { n: 4 });
      await r.put('sbLabels', 'a@x', [{ id: 'L' }]);
      await r.put('sbMail', 'a@x/2', { n: 22 });
      expect(await r.get('sbMail', 'a@x/2')).toEqual({ n: 22 });
      expect(await r.entries('sbMail', 'a@x/')).toEqual([
        ['a@x/1', { n: 1 }],
        ['a@x/2', { n: 22 }],
      ]);
      expect(await r.entries('sbMail', 'a_')).toEqual([['a_x/3', { n: 3 }]]);
      expect((await r.entries('sbMail')).length).toBe(4);
      expect((await r.values<{ n: number }>('sbMail')).map((v) => v.n).sort((x, y) => x - y)).toEqual([1, 3, 4, 22]);
      await r.delete('sbMail', 'a@x/1');
      expect(await r.get('sbMail', 'a@x/1')).toBeUndefined();
      expect(await r.values('sbLabels')).toEqual([[{ id: 'L' }]]);
      await r.close();
    });

    it('putIfAbsent sets a key once, also when nodes race', async () => {
      const { records, otherNode } = await create();
      const won = await Promise.all([records.putIfAbsent('sbClient', 'secret', 'a'), otherNode.putIfAbsent('sbClient', 'secret', 'b'), records.putIfAbsent('sbClient', 'secret', 'c')]);
      expect(won.filter(Boolean)).toHaveLength(1);
      const stored = await otherNode.get<string>('sbClient', 'secret');
      expect(['a', 'b', 'c'][won.indexOf(true)]).toBe(stored);
      await records.close();
    });
  });
}

runSandboxRecordsContract('embedded', async () => {
  // One process: every "node" is this one.
  const records = createSqliteSandboxProviderRecords(openKeyValueDb(null, null));
  return { records, otherNode: records };
});

const postgres = usePostgres();
runSandboxRecordsContract('postgres', async () => {
  const db = await postgres.open();
  return { records: createPostgresSandboxProviderRecords(db), otherNode: createPostgresSandboxProviderRecords(db) };
});
