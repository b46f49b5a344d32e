/**
 * `operator reset-token`: the way back in when the operator token is lost
 * (the first start's banner scrolled away, a start that failed after seeding).
 * It writes a new token's hash where the service reads it: the embedded store
 * under DATA_DIR (which must not be in use: the running service would never
 * see the change and would overwrite it), or PostgreSQL, where nodes started
 * without OPERATOR_TOKEN read the hash on every check and switch at once.
 */
import { ConfigError, loadConfig } from '../config.js';
import { systemClock } from '../clock.js';
import { DataDirBusyError, DataDirLock } from '../data-dir-lock.js';
import { OperatorAuth } from '../app/operator.js';
import type { LocalContext } from './local-command.js';

export async function resetOperatorTokenCommand(ctx: LocalContext): Promise<number> {
  let config;
  try {
    config = loadConfig(ctx.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      ctx.err(e.message);
      return 2;
    }
    throw e;
  }
  if (config.OPERATOR_TOKEN !== undefined) {
    ctx.err('OPERATOR_TOKEN is set: the service uses that token and ignores a stored one. Change the variable (and restart) instead.');
    return 2;
  }
  if (config.mode === 'embedded' && config.DATA_DIR === ':memory:') {
    ctx.err('DATA_DIR is :memory:, so there is no stored token to reset: restart the service to get a new one.');
    return 2;
  }
  let lock: DataDirLock | null = null;
  if (config.mode === 'embedded') {
    try {
      lock = DataDirLock.acquire(config.DATA_DIR);
    } catch (e) {
      if (e instanceof DataDirBusyError) {
        ctx.err(`the service is running on ${config.DATA_DIR} (process ${e.pid}): stop it, run this again, then start it.`);
        return 1;
      }
      throw e;
    }
  }
  try {
    // The whole service graph loads only for this rare command, not for every CLI call.
    const { openStore } = await import('../server.js');
    const { openNodeBacking, closeNodeBacking } = await import('../store/index.js');
    const backing = await openNodeBacking(config);
    const store = await openStore(config, systemClock, backing);
    try {
      const token = await (await OperatorAuth.load(store, undefined)).reset();
      const where = config.mode === 'embedded' ? `the data in ${config.DATA_DIR}` : 'PostgreSQL (nodes without OPERATOR_TOKEN use it at once)';
      if (ctx.json) ctx.out(JSON.stringify({ operatorToken: token }));
      else ctx.out([`New operator token, stored in ${where}. The old one no longer works. Shown only this once:`, '', `  export SB_OPERATOR_TOKEN=${token}`].join('\n'));
      return 0;
    } finally {
      await store.close();
      await closeNodeBacking(backing);
    }
  } finally {
    lock?.release();
  }
}
