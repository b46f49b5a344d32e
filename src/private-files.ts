import { chmodSync, existsSync, mkdirSync } from 'node:fs';

/** Data files hold customers' messages and credentials: readable by the service's user only. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `dir` (and missing parents) as 0700, and tightens it if it already existed wider. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Tightens files written by older versions (created 0644) to 0600. */
export function tightenFiles(paths: string[]): void {
  for (const p of paths) if (existsSync(p)) chmodSync(p, PRIVATE_FILE_MODE);
}
