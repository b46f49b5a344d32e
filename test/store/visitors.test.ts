import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openNodeDbIn } from '../../src/store/index.js';
import { createSqliteVisitorRepo } from '../../src/store/visitors/sqlite.js';
import { createPostgresVisitorRepo } from '../../src/store/visitors/postgres.js';
import type { VisitorRecord, VisitorRepo } from '../../src/store/visitors/port.js';
import { usePostgres } from '../harness/use-postgres.js';

/** The web chat visitor store's contract, the same against SQLite and PostgreSQL. */
function visitorContract(name: string, open: () => Promise<{ repo: VisitorRepo; close(): Promise<void> }>) {
  describe(`visitor store (${name})`, () => {
    const visitor = (over: Partial<VisitorRecord> = {}): VisitorRecord => ({
      id: 'v_' + randomBytes(12).toString('hex'),
      organizationId: 'orgA',
      channelId: 'ch_webAAAA1111',
      userId: null,
      name: null,
      email: null,
      createdAt: '2026-01-05T09:00:00.000Z',
      readUpTo: null,
      ...over,
    });

    it('creates once, reads back only within its organization, updates name, email and read marker', async () => {
      const { repo, close } = await open();
      try {
        const v = visitor();
        expect(await repo.create(v)).toEqual(v);
        // A second create with the same id keeps the first (two devices of a verified user racing).
        expect(await repo.create({ ...v, name: 'late' })).toEqual(v);
        expect(await repo.get('orgA', v.channelId, v.id)).toEqual(v);
        expect(await repo.get('orgB', v.channelId, v.id)).toBeNull();
        expect(await repo.get('orgA', 'ch_other', v.id)).toBeNull();
        const next = { ...v, name: 'Dana', email: 'dana@example.com', readUpTo: '2026-01-05T10:00:00.000Z' };
        await repo.update(next);
        expect(await repo.get('orgA', v.channelId, v.id)).toEqual(next);
        // Another organization's update changes nothing.
        await repo.update({ ...next, organizationId: 'orgB', name: 'Mallory' });
        expect((await repo.get('orgA', v.channelId, v.id))?.name).toBe('Dana');
      } finally {
        await close();
      }
    });

    it('finds tokens by hash; revokes a visitor\'s, or a channel\'s, and only within the organization', async () => {
      const { repo, close } = await open();
      try {
        const a = visitor();
        const b = visitor();
        await repo.create(a);
        await repo.create(b);
        const token = (v: VisitorRecord, hash: string) => ({ hash, organizationId: v.organizationId, channelId: v.channelId, visitorId: v.id, createdAt: v.createdAt });
        await repo.addToken(token(a, 'h-a1'));
        await repo.addToken(token(a, 'h-a2'));
        await repo.addToken(token(b, 'h-b1'));
        expect(await repo.tokenByHash('h-a1')).toEqual(token(a, 'h-a1'));
        expect(await repo.tokenByHash('nope')).toBeNull();
        expect(await repo.revokeVisitor('orgB', a.channelId, a.id)).toBe(0);
        expect(await repo.revokeVisitor('orgA', a.channelId, a.id)).toBe(2);
        expect(await repo.tokenByHash('h-a1')).toBeNull();
        expect(await repo.tokenByHash('h-a2')).toBeNull();
        expect(await repo.tokenByHash('h-b1')).not.toBeNull();
        expect(await repo.revokeChannel('orgB', b.channelId)).toBe(0);
        expect(await repo.revokeChannel('orgA', b.channelId)).toBe(1);
        expect(await repo.tokenByHash('h-b1')).toBeNull();
      } finally {
        await close();
      }
    });

    it('keeps an attachment\'s bytes exactly and gives it back only within its organization and channel', async () => {
      const { repo, close } = await open();
      try {
        const v = visitor();
        const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x0d, 0x0a]);
        const a = { id: 'wca_' + randomBytes(16).toString('hex'), organizationId: 'orgA', channelId: v.channelId, visitorId: v.id, uploadedBy: 'visitor' as const, mimeType: 'image/png', filename: 'part.png', size: bytes.length, createdAt: v.createdAt };
        await repo.putAttachment(a, bytes);
        const got = await repo.getAttachment('orgA', v.channelId, a.id);
        expect(got?.attachment).toEqual(a);
        expect(Buffer.compare(got!.bytes, bytes)).toBe(0);
        expect(await repo.getAttachment('orgB', v.channelId, a.id)).toBeNull();
        expect(await repo.getAttachment('orgA', 'ch_other', a.id)).toBeNull();
        expect(await repo.getAttachment('orgA', v.channelId, 'wca_' + '0'.repeat(32))).toBeNull();
      } finally {
        await close();
      }
    });
  });
}

visitorContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  return { repo: createSqliteVisitorRepo(db), close: () => db.close() };
});

const postgres = usePostgres();
visitorContract('postgres', async () => {
  const db = await postgres.open();
  return { repo: createPostgresVisitorRepo(db), close: () => db.close() };
});
