import { chmodSync, existsSync, statSync } from 'node:fs';
import { PRIVATE_FILE_MODE } from '../../private-files.js';
import { nodeDbPath } from '../backing.js';
import { sqliteDatabase } from './native.js';

export interface BackupResult {
  source: string;
  file: string;
  bytes: number;
  schemaVersion: number;
}

/**
 * An online backup of the node's database in `dataDir` to `out`: SQLite's
 * backup API reads a consistent snapshot while the service keeps writing
 * (WAL lets a second process read). The copy is checked (`integrity_check`)
 * and left 0600.
 */
export async function backupNodeDb(dataDir: string, out: string): Promise<BackupResult> {
  const source = nodeDbPath(dataDir);
  if (source === null) throw new Error('DATA_DIR is :memory:, there is no database file to back up');
  if (!existsSync(source)) throw new Error(`no database at ${source}: set DATA_DIR (or --data-dir) to the service's data directory`);
  if (existsSync(out)) throw new Error(`${out} exists: choose a new file name`);
  const Database = sqliteDatabase();
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(out);
  } finally {
    db.close();
  }
  chmodSync(out, PRIVATE_FILE_MODE);
  const copy = new Database(out, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`the backup ${out} failed its integrity check: ${String(check)}`);
    return { source, file: out, bytes: statSync(out).size, schemaVersion: copy.pragma('user_version', { simple: true }) as number };
  } finally {
    copy.close();
  }
}
