import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, openNodeDbIn } from '../../src/store/index.js';

/**
 * kill -9 in the middle of a write burst: after the restart every
 * acknowledged write is there, and no write is there half (a ticket without
 * its outbox event, a count that disagrees with the rows).
 */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function burstAndKill(dir: string, sync: 'FULL' | 'NORMAL', acksBeforeKill: number): Promise<Map<string, string>> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'ticket-burst.ts'), dir, sync], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acked = new Map<string, string>();
  let buf = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = /^ack (\S+) (\S+)$/.exec(line);
        if (m) acked.set(m[1]!, m[2]!);
        if (acked.size >= acksBeforeKill) resolve();
      }
    });
    child.on('exit', () => reject(new Error(`burst exited early: ${err}`)));
  });
  child.kill('SIGKILL');
  await exited;
  return acked;
}

describe('embedded store killed with SIGKILL mid-burst', () => {
  for (const sync of ['FULL', 'NORMAL'] as const) {
    it(`synchronous=${sync}: keeps every acknowledged ticket with its event, and nothing half-written`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-crash-'));
      dirs.push(dir);
      const acked = await burstAndKill(dir, sync, 400);
      const db = openNodeDbIn(dir, sync);
      expect(db.raw.pragma('integrity_check', { simple: true })).toBe('ok');
      const store = createSqliteStore(db);
      for (const id of acked.keys()) expect(await store.tickets.get('crash-org', id), id).not.toBeNull();
      const rows = db.raw.prepare("SELECT ticket_id FROM tickets WHERE org = 'crash-org'").all() as { ticket_id: string }[];
      expect(rows.length).toBeGreaterThanOrEqual(acked.size);
      // Every stored ticket has its event (one transaction), and the counts agree with the rows.
      const events = db.raw.prepare("SELECT event FROM outbox WHERE org = 'crash-org'").all() as { event: string }[];
      const eventTickets = new Set(events.map((e) => (JSON.parse(e.event) as { data: { ticketId: string } }).data.ticketId));
      expect(events.length).toBe(rows.length);
      for (const r of rows) expect(eventTickets.has(r.ticket_id)).toBe(true);
      expect((await store.tickets.list({ organizationId: 'crash-org', offset: 0, limit: 1 })).total).toBe(rows.length);
      // The sequence goes on after the highest stored ticket.
      const next = await store.tickets.create(
        { _id: 'after', title: 'after', description: 'd', status: 'open', priority: 'low', assigneeId: null, audienceId: null, audienceExternalId: null, organizationId: 'crash-org', resolutionDate: null, createdBy: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() },
        { id: 'ev-after', type: 'ticket.created', createdAt: new Date().toISOString() },
      );
      expect(rows.map((r) => r.ticket_id)).not.toContain(next.ticketId);
      await store.close();
    });
  }
});
