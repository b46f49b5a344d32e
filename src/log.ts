type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** Structured JSON lines on stdout (errors on stderr), one object per event. */
export function createLogger(
  level: Level | 'silent' = 'info',
  base: Record<string, unknown> = {},
  sink: (line: string, level: Level) => void = defaultSink,
): Logger {
  const min = order[level];
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const rec: Record<string, unknown> = { ts: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    const err = rec.err;
    if (err instanceof Error) rec.err = { name: err.name, message: err.message, stack: err.stack };
    sink(JSON.stringify(rec), lvl);
  };
  const logger: Logger = {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    // A silent logger's children are silent too: no need for a new one (they are made per request).
    child: (fields) => (min === order.silent ? logger : createLogger(level, { ...base, ...fields }, sink)),
  };
  return logger;
}

function defaultSink(line: string, level: Level): void {
  (level === 'error' ? process.stderr : process.stdout).write(line + '\n');
}

export const silentLogger: Logger = createLogger('silent');
