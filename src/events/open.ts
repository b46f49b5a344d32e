import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { EmbeddedEventLog } from './embedded-log.js';
import { JetStreamEventLog } from './jetstream-log.js';
import type { EventLog } from './types.js';
import type { NodeBacking } from '../store/backing.js';

/**
 * The event log of the configured mode: JetStream when NATS_URL is set; else
 * the embedded log, in the node's SQLite database when it has one, else
 * (Redis state without NATS) in segment files under DATA_DIR/events.
 */
export async function openEventLog(config: Config, log: Logger, backing?: NodeBacking): Promise<EventLog> {
  if (config.NATS_URL !== undefined) {
    return JetStreamEventLog.connect(config.NATS_URL, {
      prefix: config.KEY_PREFIX,
      maxAgeMs: config.EVENTS_MAX_AGE_HOURS * 3600_000,
      replicas: config.EVENTS_STREAM_REPLICAS,
      ackWaitMs: config.EVENTS_ACK_WAIT_MS,
      log: log.child({ component: 'events' }),
    });
  }
  if (backing?.kind === 'sqlite') {
    return EmbeddedEventLog.openSqlite(backing.db, { log: log.child({ component: 'events' }), replayRetainEvents: config.EVENTS_REPLAY_RETAIN });
  }
  return EmbeddedEventLog.open(config.DATA_DIR === ':memory:' ? null : join(config.DATA_DIR, 'events'), {
    log: log.child({ component: 'events' }),
    replayRetainEvents: config.EVENTS_REPLAY_RETAIN,
  });
}
