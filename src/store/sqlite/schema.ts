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
  {
    // Full-text search (FTS5) over message text, contact names and phone digits, ticket subjects and
    // descriptions, kept by triggers; the same text PostgreSQL indexes with tsvector. Accents and case
    // are folded (unicode61, remove_diacritics 2). Contacts and tickets have no integer rowid, so a
    // table of their own gives each one the rowid its index entry goes by.
    version: 3,
    up(db) {
      db.exec(`
        CREATE VIRTUAL TABLE session_messages_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER session_messages_fts_insert AFTER INSERT ON session_messages BEGIN
          INSERT INTO session_messages_fts (rowid, text)
            VALUES (new.seq, coalesce(json_extract(new.body, '$.content.text'), json_extract(new.body, '$.content.caption'), ''));
        END;
        CREATE TRIGGER session_messages_fts_delete AFTER DELETE ON session_messages BEGIN
          DELETE FROM session_messages_fts WHERE rowid = old.seq;
        END;
        INSERT INTO session_messages_fts (rowid, text)
          SELECT seq, coalesce(json_extract(body, '$.content.text'), json_extract(body, '$.content.caption'), '') FROM session_messages;

        CREATE TABLE contacts_search_ids (
          id INTEGER PRIMARY KEY,
          org TEXT NOT NULL,
          audience_external_id TEXT NOT NULL,
          UNIQUE (org, audience_external_id)
        );
        CREATE VIRTUAL TABLE contacts_fts USING fts5(name, phone, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER contacts_fts_insert AFTER INSERT ON contacts BEGIN
          INSERT OR IGNORE INTO contacts_search_ids (org, audience_external_id) VALUES (new.org, new.audience_external_id);
          INSERT INTO contacts_fts (rowid, name, phone)
            SELECT id, coalesce(json_extract(new.body, '$.name'), ''), substr(new.audience_external_id, 1, instr(new.audience_external_id || ':', ':') - 1)
            FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id;
        END;
        CREATE TRIGGER contacts_fts_update AFTER UPDATE OF body ON contacts
          WHEN json_extract(old.body, '$.name') IS NOT json_extract(new.body, '$.name') BEGIN
          UPDATE contacts_fts SET name = coalesce(json_extract(new.body, '$.name'), '')
            WHERE rowid = (SELECT id FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id);
        END;
        INSERT INTO contacts_search_ids (org, audience_external_id) SELECT org, audience_external_id FROM contacts;
        INSERT INTO contacts_fts (rowid, name, phone)
          SELECT i.id, coalesce(json_extract(c.body, '$.name'), ''), substr(c.audience_external_id, 1, instr(c.audience_external_id || ':', ':') - 1)
          FROM contacts c JOIN contacts_search_ids i ON i.org = c.org AND i.audience_external_id = c.audience_external_id;

        CREATE TABLE tickets_search_ids (
          id INTEGER PRIMARY KEY,
          org TEXT NOT NULL,
          seq INTEGER NOT NULL,
          UNIQUE (org, seq)
        );
        CREATE VIRTUAL TABLE tickets_fts USING fts5(subject, description, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER tickets_fts_insert AFTER INSERT ON tickets BEGIN
          INSERT OR IGNORE INTO tickets_search_ids (org, seq) VALUES (new.org, new.seq);
          DELETE FROM tickets_fts WHERE rowid = (SELECT id FROM tickets_search_ids WHERE org = new.org AND seq = new.seq);
          INSERT INTO tickets_fts (rowid, subject, description)
            SELECT id, coalesce(json_extract(new.body, '$.title'), ''), coalesce(json_extract(new.body, '$.description'), '')
            FROM tickets_search_ids WHERE org = new.org AND seq = new.seq;
        END;
        INSERT INTO tickets_search_ids (org, seq) SELECT org, seq FROM tickets;
        INSERT INTO tickets_fts (rowid, subject, description)
          SELECT i.id, coalesce(json_extract(t.body, '$.title'), ''), coalesce(json_extract(t.body, '$.description'), '')
          FROM tickets t JOIN tickets_search_ids i ON i.org = t.org AND i.seq = t.seq;
      `);
    },
  },
  {
    // The inbox's views over the conversation index. Generated from the stored record, so every writer
    // (the actors, the JSON import) fills them without knowing they exist: `lane` is the one view a
    // conversation is in (assigned, waiting, resolved or with the bot), `phone_number_id` its channel's
    // number, `waiting_since` the key of the longest-waiting order (in the queue since, else last activity).
    version: 4,
    up(db) {
      db.exec(`
        ALTER TABLE conversations ADD COLUMN lane TEXT GENERATED ALWAYS AS (
          CASE WHEN status = 'assigned' THEN 'assigned' WHEN status = 'queued' THEN 'waiting'
            WHEN json_extract(body, '$.sessionStatus') = 'resolved' THEN 'resolved' ELSE 'bot' END) VIRTUAL;
        ALTER TABLE conversations ADD COLUMN phone_number_id TEXT GENERATED ALWAYS AS (substr(audience_external_id, instr(audience_external_id, ':') + 1)) VIRTUAL;
        ALTER TABLE conversations ADD COLUMN waiting_since TEXT GENERATED ALWAYS AS (coalesce(queued_at, updated_at)) VIRTUAL;
        CREATE INDEX conversations_by_lane ON conversations (org, lane, updated_at DESC, audience_external_id);
        CREATE INDEX conversations_by_lane_waiting ON conversations (org, lane, waiting_since, audience_external_id);
        CREATE INDEX conversations_by_waiting ON conversations (org, waiting_since, audience_external_id);
        CREATE INDEX conversations_by_phone_number ON conversations (org, phone_number_id, updated_at DESC, audience_external_id);
      `);
    },
  },
  {
    // A ticket's activity: its creation, each change of its fields and each comment, in the order
    // written (`seq`), each in the same transaction as what it records. Tickets made before have
    // their creation entered from what the ticket recorded of it.
    version: 5,
    up(db) {
      db.exec(`
        CREATE TABLE ticket_activity (
          seq INTEGER PRIMARY KEY,
          org TEXT NOT NULL,
          ticket_id TEXT NOT NULL,
          body TEXT NOT NULL
        );
        CREATE INDEX ticket_activity_by_ticket ON ticket_activity (org, ticket_id, seq);
        INSERT INTO ticket_activity (org, ticket_id, body)
          SELECT org, ticket_id, json_object(
            'id', lower(hex(randomblob(16))), 'ticketId', ticket_id, 'organizationId', org, 'kind', 'created',
            'actor', CASE WHEN json_type(body, '$.createdBy') = 'object' THEN json(json_extract(body, '$.createdBy')) ELSE NULL END,
            'at', json_extract(body, '$.createdAt'))
          FROM tickets ORDER BY org, seq;
      `);
    },
  },
  {
    // The conversation actors' durable timers (the bot's fallback): when each conversation is next due,
    // generated from the stored record, indexed across organizations for the sweeper.
    version: 6,
    up(db) {
      db.exec(`
        ALTER TABLE conversations ADD COLUMN due_at TEXT GENERATED ALWAYS AS (json_extract(body, '$.dueAt')) VIRTUAL;
        CREATE INDEX conversations_due ON conversations (due_at) WHERE due_at IS NOT NULL;
      `);
    },
  },
  {
    // Canned replies: an organization's snippets, each short code once per organization.
    version: 7,
    up(db) {
      db.exec(`
        CREATE TABLE canned_replies (
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          short_code TEXT NOT NULL,
          body TEXT NOT NULL,
          PRIMARY KEY (org, id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX canned_replies_by_code ON canned_replies (org, short_code);
      `);
    },
  },
  {
    // An organization's labels (a name unique in any case, a colour) and what each is on: conversations
    // (by audienceExternalId) and contacts (by id). A view filtered by label looks its rows up by
    // organization, kind and label; a conversation's labels by its target.
    version: 8,
    up(db) {
      db.exec(`
        CREATE TABLE labels (
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          name TEXT NOT NULL,
          name_key TEXT NOT NULL,
          color TEXT NOT NULL,
          created_at TEXT NOT NULL,
          PRIMARY KEY (org, id)
        );
        CREATE UNIQUE INDEX labels_by_name ON labels (org, name_key);
        CREATE TABLE labelled (
          org TEXT NOT NULL,
          kind TEXT NOT NULL,
          target TEXT NOT NULL,
          label_id TEXT NOT NULL,
          added_at TEXT NOT NULL,
          PRIMARY KEY (org, kind, label_id, target)
        );
        CREATE INDEX labelled_by_target ON labelled (org, kind, target);
      `);
    },
  },
  {
    // Web chat: a channel's visitors (each a contact of the channel) and the tokens their browsers
    // hold, by hash only. Revoking a visitor deletes its tokens.
    version: 9,
    up(db) {
      db.exec(`
        CREATE TABLE webchat_visitors (
          channel_id TEXT NOT NULL,
          id TEXT NOT NULL,
          org TEXT NOT NULL,
          body TEXT NOT NULL,
          PRIMARY KEY (channel_id, id)
        ) WITHOUT ROWID;
        CREATE TABLE webchat_tokens (
          hash TEXT PRIMARY KEY,
          org TEXT NOT NULL,
          channel_id TEXT NOT NULL,
          visitor_id TEXT NOT NULL,
          created_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX webchat_tokens_by_visitor ON webchat_tokens (channel_id, visitor_id);
      `);
    },
  },
  {
    // Contacts are found by their custom attributes' values too: the contacts' FTS5 index gains a
    // column for them (FTS5 tables take no new column: it is made again, from the contacts).
    version: 10,
    up(db) {
      db.exec(`
        DROP TRIGGER contacts_fts_insert;
        DROP TRIGGER contacts_fts_update;
        DROP TABLE contacts_fts;
        CREATE VIRTUAL TABLE contacts_fts USING fts5(name, phone, attrs, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER contacts_fts_insert AFTER INSERT ON contacts BEGIN
          INSERT OR IGNORE INTO contacts_search_ids (org, audience_external_id) VALUES (new.org, new.audience_external_id);
          INSERT INTO contacts_fts (rowid, name, phone, attrs)
            SELECT id, coalesce(json_extract(new.body, '$.name'), ''), substr(new.audience_external_id, 1, instr(new.audience_external_id || ':', ':') - 1),
              coalesce((SELECT group_concat(value, ' ') FROM json_each(new.body, '$.attributes')), '')
            FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id;
        END;
        CREATE TRIGGER contacts_fts_update AFTER UPDATE OF body ON contacts
          WHEN json_extract(old.body, '$.name') IS NOT json_extract(new.body, '$.name')
            OR json_extract(old.body, '$.attributes') IS NOT json_extract(new.body, '$.attributes') BEGIN
          UPDATE contacts_fts SET name = coalesce(json_extract(new.body, '$.name'), ''),
              attrs = coalesce((SELECT group_concat(value, ' ') FROM json_each(new.body, '$.attributes')), '')
            WHERE rowid = (SELECT id FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id);
        END;
        INSERT INTO contacts_fts (rowid, name, phone, attrs)
          SELECT i.id, coalesce(json_extract(c.body, '$.name'), ''), substr(c.audience_external_id, 1, instr(c.audience_external_id || ':', ':') - 1),
            coalesce((SELECT group_concat(value, ' ') FROM json_each(c.body, '$.attributes')), '')
          FROM contacts c JOIN contacts_search_ids i ON i.org = c.org AND i.audience_external_id = c.audience_external_id;
      `);
    },
  },
  {
    // Web chat attachments: a visitor's or an agent's file in a conversation, its bytes beside its
    // record (served only to that visitor and the organization's agents).
    version: 11,
    up(db) {
      db.exec(`
        CREATE TABLE webchat_attachments (
          channel_id TEXT NOT NULL,
          id TEXT NOT NULL,
          org TEXT NOT NULL,
          body TEXT NOT NULL,
          bytes BLOB NOT NULL,
          PRIMARY KEY (channel_id, id)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    // Conversations past their response-time target: when the target was missed, generated from the
    // stored record (the actor writes it), for the views' sla=breached filter.
    version: 12,
    up(db) {
      db.exec(`
        ALTER TABLE conversations ADD COLUMN sla_breached_at TEXT GENERATED ALWAYS AS (json_extract(body, '$.sla.breachedAt')) VIRTUAL;
        CREATE INDEX conversations_sla_breached ON conversations (org, sla_breached_at) WHERE sla_breached_at IS NOT NULL;
      `);
    },
  },
  {
    // Teams (a name unique in any case per organization), and the team whose queue a conversation is
    // in, generated from the stored record so a view filtered by team finds its rows by index.
    version: 13,
    up(db) {
      db.exec(`
        CREATE TABLE teams (
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          name_key TEXT NOT NULL,
          body TEXT NOT NULL,
          PRIMARY KEY (org, id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX teams_by_name ON teams (org, name_key);
        ALTER TABLE conversations ADD COLUMN team_id TEXT GENERATED ALWAYS AS (json_extract(body, '$.teamId')) VIRTUAL;
        CREATE INDEX conversations_by_team ON conversations (org, team_id, lane, waiting_since, audience_external_id) WHERE team_id IS NOT NULL;
      `);
    },
  },
  {
    // Ticket and message text reaches its FTS5 index in bulk: a trigger notes each new or rewritten
    // row in search_pending, and the notes are folded into the index every few hundred rows and
    // before any search (search/sqlite.ts). An FTS5 insert in every commit wrote an index segment
    // per commit, which cost a ticket create a sixth of its rate.
    version: 14,
    up(db) {
      db.exec(`
        CREATE TABLE search_pending (
          id INTEGER PRIMARY KEY,
          kind TEXT NOT NULL,
          ref INTEGER NOT NULL
        );
        DROP TRIGGER tickets_fts_insert;
        CREATE TRIGGER tickets_search_pending AFTER INSERT ON tickets BEGIN
          INSERT OR IGNORE INTO tickets_search_ids (org, seq) VALUES (new.org, new.seq);
          INSERT INTO search_pending (kind, ref) SELECT 'ticket', id FROM tickets_search_ids WHERE org = new.org AND seq = new.seq;
        END;
        DROP TRIGGER session_messages_fts_insert;
        CREATE TRIGGER session_messages_search_pending AFTER INSERT ON session_messages BEGIN
          INSERT INTO search_pending (kind, ref) VALUES ('message', new.seq);
        END;
      `);
    },
  },  {
    // A chat-network customer's ids: each id the network showed for a person (their phone form and
    // their business-scoped user id form), and the canonical id of the contact it belongs to.
    version: 15,
    up(db) {
      db.exec(`
        CREATE TABLE contact_ids (
          org TEXT NOT NULL,
          id TEXT NOT NULL,
          canonical TEXT NOT NULL,
          PRIMARY KEY (org, id)
        ) WITHOUT ROWID;
        CREATE INDEX contact_ids_by_canonical ON contact_ids (org, canonical);
      `);
    },
  },  {
    // Contacts are found by the ids the chat network shows of them too: their WhatsApp username,
    // their business-scoped user id and their phone (a contact first known by BSUID that shared its
    // number later). A fourth FTS5 column, so the index is made again, from the contacts.
    version: 16,
    up(db) {
      db.exec(`
        DROP TRIGGER contacts_fts_insert;
        DROP TRIGGER contacts_fts_update;
        DROP TABLE contacts_fts;
        CREATE VIRTUAL TABLE contacts_fts USING fts5(name, phone, attrs, ids, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER contacts_fts_insert AFTER INSERT ON contacts BEGIN
          INSERT OR IGNORE INTO contacts_search_ids (org, audience_external_id) VALUES (new.org, new.audience_external_id);
          INSERT INTO contacts_fts (rowid, name, phone, attrs, ids)
            SELECT id, coalesce(json_extract(new.body, '$.name'), ''), substr(new.audience_external_id, 1, instr(new.audience_external_id || ':', ':') - 1),
              coalesce((SELECT group_concat(value, ' ') FROM json_each(new.body, '$.attributes')), ''), replace(trim(coalesce(json_extract(new.body, '$.username'), '') || ' ' || coalesce(json_extract(new.body, '$.userId'), '') || ' ' || coalesce(json_extract(new.body, '$.phone'), '')), '.', ' ')
            FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id;
        END;
        CREATE TRIGGER contacts_fts_update AFTER UPDATE OF body ON contacts
          WHEN json_extract(old.body, '$.name') IS NOT json_extract(new.body, '$.name')
            OR json_extract(old.body, '$.attributes') IS NOT json_extract(new.body, '$.attributes')
            OR json_extract(old.body, '$.username') IS NOT json_extract(new.body, '$.username')
            OR json_extract(old.body, '$.userId') IS NOT json_extract(new.body, '$.userId')
            OR json_extract(old.body, '$.phone') IS NOT json_extract(new.body, '$.phone') BEGIN
          UPDATE contacts_fts SET name = coalesce(json_extract(new.body, '$.name'), ''),
              attrs = coalesce((SELECT group_concat(value, ' ') FROM json_each(new.body, '$.attributes')), ''),
              ids = replace(trim(coalesce(json_extract(new.body, '$.username'), '') || ' ' || coalesce(json_extract(new.body, '$.userId'), '') || ' ' || coalesce(json_extract(new.body, '$.phone'), '')), '.', ' ')
            WHERE rowid = (SELECT id FROM contacts_search_ids WHERE org = new.org AND audience_external_id = new.audience_external_id);
        END;
        INSERT INTO contacts_fts (rowid, name, phone, attrs, ids)
          SELECT i.id, coalesce(json_extract(c.body, '$.name'), ''), substr(c.audience_external_id, 1, instr(c.audience_external_id || ':', ':') - 1),
            coalesce((SELECT group_concat(value, ' ') FROM json_each(c.body, '$.attributes')), ''), replace(trim(coalesce(json_extract(c.body, '$.username'), '') || ' ' || coalesce(json_extract(c.body, '$.userId'), '') || ' ' || coalesce(json_extract(c.body, '$.phone'), '')), '.', ' ')
          FROM contacts c JOIN contacts_search_ids i ON i.org = c.org AND i.audience_external_id = c.audience_external_id;
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
