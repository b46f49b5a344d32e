import type { Migration } from './db.js';

/**
 * The schema of a node's database (`DATA_DIR/switchboard.db`), one step per
 * version (`PRAGMA user_version`). Steps are only ever appended: a released
 * step never changes, a change of schema is a new step.
 *
 * Tables have columns for what is looked up, filtered or ordered by, and a
 * `body` with the record as JSON (what is only ever read whole). Small
 * collections (organizations, users, keys, channels, templates, credits,
 * actor state…) share the key-value table `records`.
 */
export const NODE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up(db) {
      db.exec(`
        CREATE TABLE records (
          coll TEXT NOT NULL,
          key TEXT NOT NULL,
          value TEXT NOT NULL,
          PRIMARY KEY (coll, key)
        ) WITHOUT ROWID;

        CREATE TABLE tickets (
          org TEXT NOT NULL,
          seq INTEGER NOT NULL,
          ticket_id TEXT NOT NULL,
          status TEXT NOT NULL,
          priority TEXT NOT NULL,
          assignee_id TEXT,
          audience_id TEXT,
          body TEXT NOT NULL,
          PRIMARY KEY (org, seq)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX tickets_by_id ON tickets (org, ticket_id);
        CREATE INDEX tickets_by_status ON tickets (org, status, seq);
        CREATE INDEX tickets_by_priority ON tickets (org, priority, seq);
        CREATE INDEX tickets_by_audience ON tickets (org, audience_id, seq);
        CREATE INDEX tickets_by_assignee ON tickets (org, assignee_id, seq);
        -- Counts per organization ('all', 's:<status>') kept with each change, so a page's total costs no scan.
        CREATE TABLE ticket_counts (
          org TEXT NOT NULL,
          name TEXT NOT NULL,
          n INTEGER NOT NULL,
          PRIMARY KEY (org, name)
        ) WITHOUT ROWID;
        CREATE TABLE ticket_idempotency (
          org TEXT NOT NULL,
          key TEXT NOT NULL,
          fingerprint TEXT NOT NULL,
          ticket_id TEXT NOT NULL,
          expires_at INTEGER NOT NULL,
          PRIMARY KEY (org, key)
        ) WITHOUT ROWID;
        CREATE INDEX ticket_idempotency_by_expiry ON ticket_idempotency (expires_at);

        CREATE TABLE outbox (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          org TEXT NOT NULL,
          event_id TEXT NOT NULL,
          event TEXT NOT NULL
        );
        CREATE UNIQUE INDEX outbox_by_event ON outbox (org, event_id);

        CREATE TABLE contacts (
          org TEXT NOT NULL,
          audience_external_id TEXT NOT NULL,
          id TEXT NOT NULL,
          body TEXT NOT NULL,
          PRIMARY KEY (org, audience_external_id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX contacts_by_id ON contacts (org, id);

        CREATE TABLE chat_sessions (
          org TEXT NOT NULL,
          session_id TEXT NOT NULL,
          audience_external_id TEXT NOT NULL,
          opened_at TEXT NOT NULL,
          PRIMARY KEY (org, session_id)
        ) WITHOUT ROWID;
        CREATE INDEX chat_sessions_by_contact ON chat_sessions (org, audience_external_id, opened_at);

        CREATE TABLE session_messages (
          seq INTEGER PRIMARY KEY,
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          session_id TEXT NOT NULL,
          network_id TEXT,
          status TEXT,
          body TEXT NOT NULL
        );
        CREATE UNIQUE INDEX session_messages_by_id ON session_messages (org, id);
        CREATE INDEX session_messages_by_session ON session_messages (org, session_id, seq);
        CREATE INDEX session_messages_by_network_id ON session_messages (org, network_id) WHERE network_id IS NOT NULL;

        CREATE TABLE conversations (
          org TEXT NOT NULL,
          audience_external_id TEXT NOT NULL,
          status TEXT NOT NULL,
          assignee_id TEXT,
          updated_at TEXT NOT NULL,
          queued_at TEXT,
          version INTEGER NOT NULL,
          body TEXT NOT NULL,
          PRIMARY KEY (org, audience_external_id)
        ) WITHOUT ROWID;
        CREATE INDEX conversations_by_update ON conversations (org, updated_at DESC, audience_external_id);
        CREATE INDEX conversations_by_status ON conversations (org, status, updated_at DESC);

        CREATE TABLE webhook_deliveries (
          seq INTEGER PRIMARY KEY,
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          registration_id TEXT NOT NULL,
          status TEXT NOT NULL,
          due_at INTEGER,
          updated_at TEXT NOT NULL,
          body TEXT NOT NULL
        );
        CREATE UNIQUE INDEX webhook_deliveries_by_id ON webhook_deliveries (org, id);
        CREATE INDEX webhook_deliveries_by_registration ON webhook_deliveries (org, registration_id, seq);
        CREATE INDEX webhook_deliveries_by_state ON webhook_deliveries (org, registration_id, status, seq);
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (org, registration_id, due_at, id) WHERE status = 'pending';
        CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status != 'pending';
      `);
    },
  },
  {
    // The embedded event log moves into the node's database, so an event commits with the writes of its turn.
    version: 2,
    up(db) {
      db.exec(`
        CREATE TABLE events (
          seq INTEGER PRIMARY KEY,
          id TEXT NOT NULL,
          org TEXT NOT NULL,
          type TEXT NOT NULL,
          at INTEGER NOT NULL,
          body TEXT NOT NULL
        );
        CREATE TABLE event_cursors (
          name TEXT PRIMARY KEY,
          seq INTEGER NOT NULL
        ) WITHOUT ROWID;
      `);
    },
  },
];

/** A database of key-value collections only (the sandbox providers', standing for Google and Stripe). */
export const KEY_VALUE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up(db) {
      db.exec(`
        CREATE TABLE records (
          coll TEXT NOT NULL,
          key TEXT NOT NULL,
          value TEXT NOT NULL,
          PRIMARY KEY (coll, key)
        ) WITHOUT ROWID;
      `);
    },
  },
];

/** The sandbox network's own database (`DATA_DIR/sandbox-network.db`): it simulates a system outside the service. */
export const SANDBOX_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up(db) {
      db.exec(`
        CREATE TABLE records (
          coll TEXT NOT NULL,
          key TEXT NOT NULL,
          value TEXT NOT NULL,
          PRIMARY KEY (coll, key)
        ) WITHOUT ROWID;
        CREATE TABLE messages (
          seq INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          pair TEXT NOT NULL,
          body TEXT NOT NULL
        );
        CREATE INDEX messages_by_pair ON messages (pair, seq);
      `);
    },
  },
];
