import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSandboxDb } from '../../src/store/index.js';
import { createSqliteSandboxState, createPostgresSandboxState } from '../../src/network/sandbox/index.js';
import { usePostgres } from '../harness/use-postgres.js';

import { runSandboxStateContract } from './sandbox-state.contract.js';

runSandboxStateContract('embedded', async () => {
  const db = await openSandboxDb(null);
  return { state: createSqliteSandboxState(db), close: () => db.close() };
});

const postgres = usePostgres();
runSandboxStateContract('postgres', async () => {
  const db = await postgres.open();
  return { state: createPostgresSandboxState(db), close: () => db.close() };
});

describe('sandbox state on disk', () => {
  it('keeps accounts and the message history across a restart, in its own database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-sandbox-'));
    try {
      const db = openSandboxDb(dir);
      expect(db.file).toBe(join(dir, 'sandbox-network.db'));
      const state = createSqliteSandboxState(db);
      await state.putMessage({ id: 'm1', phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: 1, status: 'accepted' });
      await state.putMessage({ id: 'm2', phoneNumberId: 'p1', customer: '4911', direction: 'from_customer', at: 2 });
      await state.updateMessage({ id: 'm1', phoneNumberId: 'p1', customer: '4911', direction: 'to_customer', at: 1, status: 'read' });
      // No close: what was acknowledged is on disk.
      const again = createSqliteSandboxState(openSandboxDb(dir));
      expect((await again.conversation('p1', '4911', 10)).map((m) => `${m.id}:${m.status ?? '-'}`)).toEqual(['m1:read', 'm2:-']);
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
