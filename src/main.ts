import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';
import { DataDirBusyError } from './data-dir-lock.js';
import { StorageOpenError } from './store/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`switchboard: ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  let running;
  try {
    running = await startServer(config);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      const port = (e as { port?: number }).port ?? config.PORT;
      const variable = (e as { variable?: string }).variable ?? (port === config.MCP_PORT ? 'MCP_PORT' : 'PORT');
      process.stderr.write(`switchboard: cannot listen on ${config.HOST}:${port} (${code}): stop what holds the port, or set ${variable}\n`);
      process.exit(1);
    }
    if (e instanceof DataDirBusyError) {
      process.stderr.write(`switchboard: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.services.log.info('shutting down', { signal });
    running.close().then(
      () => process.exit(0),
      (err) => {
        running.services.log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  // A database that cannot be used: the message names the file and what to do; a stack adds nothing.
  if (err instanceof StorageOpenError) {
    process.stderr.write(`switchboard: ${err.message}\n`);
    process.exit(74);
  }
  process.stderr.write(`switchboard: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
