/**
 * Moving a clustered deployment's records from the old layout (every record
 * in Redis) into PostgreSQL: one reader per aggregate (`core.ts`,
 * `webhooks.ts`, `messaging.ts`, …) that finds its records with SCAN, and a writer and a
 * verification that work on any of them (`run.ts`, `table.ts`).
 */
export { importRedisRecords, verifyRedisImport, IMPORT_TABLES, type ImportCount, type ImportOptions, type Mismatch, type VerifyCount, type VerifyReport } from './run.js';
export { redisImportSource, type RedisImportSource } from './source.js';
export { canonicalJson, type ImportTable } from './table.js';
