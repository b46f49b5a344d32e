import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirBusyError, DataDirLock } from '../../src/data-dir-lock.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'sb-lock-'));
  dirs.push(d);
  return d;
};

describe('DataDirLock', () => {
  it('refuses a data dir another live process holds, takes over one a dead process left, and releases its own', async () => {
    const dir = fresh();
    const other = spawn('sleep', ['30']);
    try {
      writeFileSync(join(dir, DataDirLock.FILE), `${other.pid}\n`);
      expect(() => DataDirLock.acquire(dir)).toThrow(DataDirBusyError);
    } finally {
      other.kill();
    }
    await new Promise((r) => other.once('exit', r));
    // Its holder is gone now: taken over.
    const lock = DataDirLock.acquire(dir);
    expect(readFileSync(join(dir, DataDirLock.FILE), 'utf8').trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(join(dir, DataDirLock.FILE))).toBe(false);
  });

  it('does not remove a lock that another process took after ours was taken over', () => {
    const dir = fresh();
    const lock = DataDirLock.acquire(dir);
    writeFileSync(join(dir, DataDirLock.FILE), '1\n');
    lock.release();
    expect(readFileSync(join(dir, DataDirLock.FILE), 'utf8')).toBe('1\n');
  });
});
