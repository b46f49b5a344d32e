import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-files.js';

/** Thrown when another live process holds the data directory. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`${dir} is in use by process ${pid}: stop it first (or, if no such service runs, delete ${join(dir, DataDirLock.FILE)})`);
    this.name = 'DataDirBusyError';
  }
}

/**
 * Keeps an embedded DATA_DIR to one process at a time: the embedded stores
 * hold their data in memory and append to their logs, so a second writer (a
 * second service, or the CLI's `operator reset-token` beside a running one)
 * would be overwritten or interleave with it.
 *
 * Guarantees:
 * - `acquire` fails with `DataDirBusyError` while a live process other than
 *   this one holds the directory.
 * - A lock left by a process that died (crash, kill -9, a failed start) is
 *   taken over; so is one this process left (a test abandoning a service).
 * - `release` (and the process's exit) removes the lock only if it is still
 *   this process's.
 *
 * Two processes taking over the same stale lock at the very same moment can
 * both win; the lock guards against mistakes, not against a race of starts.
 */
export class DataDirLock {
  static readonly FILE = 'owner.pid';
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(private readonly path: string) {
    process.once('exit', this.onExit);
  }

  static acquire(dir: string): DataDirLock {
    ensurePrivateDir(dir);
    const path = join(dir, DataDirLock.FILE);
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        return new DataDirLock(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      }
      const holder = readHolder(path);
      if (holder !== null && holder !== process.pid && alive(holder)) throw new DataDirBusyError(dir, holder);
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    try {
      if (readHolder(this.path) === process.pid) unlinkSync(this.path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

function readHolder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
