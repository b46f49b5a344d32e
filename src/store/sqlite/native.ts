import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
let loaded: typeof BetterSqlite3 | undefined;

/**
 * better-sqlite3 for the running Node, loaded on first use. Where Node-API 10
 * exists (Node ≥ 22.14) it is version 13: a Node-API addon whose prebuilt
 * binary ships inside the npm package, so nothing is compiled and one install
 * serves every Node from 22 on. Node 20 lacks Node-API 10, so there it is
 * version 12 (the optional dependency `better-sqlite3-node20`, compiled from
 * source at install for that Node's ABI). Version 12 must never be loaded on
 * Node ≥ 24.19: its raw ObjectWrap aborts the process when a collected
 * Statement removes its cleanup hook. Both versions have the same API.
 */
export function sqliteDatabase(): typeof BetterSqlite3 {
  loaded ??= require(sqlitePackage()) as typeof BetterSqlite3;
  return loaded;
}

/** The package name this Node loads better-sqlite3 from. */
export function sqlitePackage(): string {
  return Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20';
}
