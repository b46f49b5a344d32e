import type { PgMigration } from './db.js';

/*
 * The schema of the clustered system of record, one step per version
 * (`schema_migrations`). Steps are only ever appended: a released step never
 * changes, a change of schema is a new step. Tables mirror the embedded
 * database's (`sqlite/schema.ts`): columns for what is looked up, filtered or
 * ordered by, and a JSONB `body` with the record as the API shows it.
 * Text that the workspace searches has a generated `tsvector` with a GIN
 * index.
 */

// Folds case and the accents of Latin letters, as FTS5's unicode61 tokenizer does in the embedded
// database: immutable, so generated search columns can use it, and queries fold their words the same way.
const SEARCH = `
  CREATE FUNCTION sb_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(lower(t),
      'áàâäãåāăąçćčďéèêëēėęěíìîïīįñńňóòôöõøōőŕřśšşťúùûüūůűųýÿźżžł',
      'aaaaaaaaacccdeeeeeeeeiiiiiinnnoooooooorrssstuuuuuuuuyyzzzl')
  $$;
`;

// The organization's own records (`core/postgres.ts`); `records` holds small key-value collections.
const CORE = `
  CREATE TABLE records (
    coll text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    PRIMARY KEY (coll, key)
  );

  CREATE TABLE organizations (
    id text PRIMARY KEY,
    created_at text NOT NULL,
    body jsonb NOT NULL
  );

  CREATE TABLE users (
    org text NOT NULL,
    id text NOT NULL,
    email text NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, id),
    UNIQUE (org, email)
  );
  CREATE INDEX users_by_email ON users (email);

  CREATE TABLE api_keys (
    hash text PRIMARY KEY,
    org text NOT NULL,
    id text NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL,
    UNIQUE (org, id)
  );

  CREATE TABLE contacts (
    org text NOT NULL,
    audience_external_id text NOT NULL,
    id text NOT NULL,
    body jsonb NOT NULL,
    -- The contact's name and phone digits, for the workspace's search.
    search tsvector GENERATED ALWAYS AS (
      to_tsvector('simple', sb_fold(coalesce(body->>'name', '')) || ' ' || split_part(audience_external_id, ':', 1))
    ) STORED,
    PRIMARY KEY (org, audience_external_id),
    UNIQUE (org, id)
  );
  CREATE INDEX contacts_search ON contacts USING gin (search);

  CREATE TABLE ticket_seqs (
    org text PRIMARY KEY,
    seq bigint NOT NULL
  );
  CREATE TABLE tickets (
    org text NOT NULL,
    seq bigint NOT NULL,
    ticket_id text NOT NULL,
    status text NOT NULL,
    priority text NOT NULL,
    assignee_id text,
    audience_id text,
    body jsonb NOT NULL,
    search tsvector GENERATED ALWAYS AS (
      to_tsvector('simple', sb_fold(coalesce(body->>'title', '') || ' ' || coalesce(body->>'description', '')))
    ) STORED,
    PRIMARY KEY (org, seq)
  );
  CREATE UNIQUE INDEX tickets_by_id ON tickets (org, ticket_id);
  CREATE INDEX tickets_by_status ON tickets (org, status, seq);
  CREATE INDEX tickets_by_priority ON tickets (org, priority, seq);
  CREATE INDEX tickets_by_audience ON tickets (org, audience_id, seq);
  CREATE INDEX tickets_by_assignee ON tickets (org, assignee_id, seq);
  CREATE INDEX tickets_search ON tickets USING gin (search);
  -- Counts per organization ('all', 's:<status>') kept with each change, so a page's total costs no scan.
  CREATE TABLE ticket_counts (
    org text NOT NULL,
    name text NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (org, name)
  );
  CREATE TABLE ticket_idempotency (
    org text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    ticket_id text NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (org, key)
  );
  CREATE INDEX ticket_idempotency_by_expiry ON ticket_idempotency (expires_at);

  CREATE TABLE outbox (
    id bigserial PRIMARY KEY,
    org text NOT NULL,
    event_id text NOT NULL,
    event jsonb NOT NULL,
    UNIQUE (org, event_id)
  );
`;

// Webhook registrations with their delivery history (`webhooks/postgres.ts`; the lane schedule and its leases stay in Redis), and `/api/v1/resource` records (`resources/postgres.ts`).
const WEBHOOKS = `
  CREATE TABLE webhook_registrations (
    org text NOT NULL,
    id text NOT NULL,
    url text NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, id),
    UNIQUE (org, url)
  );

  -- A registration's deletion takes its deliveries with it; an enqueue holds the registration's row (FOR KEY SHARE) so none outlives it.
  CREATE TABLE webhook_deliveries (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org text NOT NULL,
    id text NOT NULL,
    registration_id text NOT NULL,
    status text NOT NULL,
    due_at bigint,
    updated_at text NOT NULL,
    body jsonb NOT NULL,
    UNIQUE (org, id),
    FOREIGN KEY (org, registration_id) REFERENCES webhook_registrations (org, id) ON DELETE CASCADE
  );
  CREATE INDEX webhook_deliveries_by_registration ON webhook_deliveries (org, registration_id, seq);
  CREATE INDEX webhook_deliveries_by_state ON webhook_deliveries (org, registration_id, status, seq);
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (org, registration_id, due_at, id) WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status <> 'pending';

  CREATE TABLE resources (
    org text NOT NULL,
    id text NOT NULL,
    -- The name trimmed and lower-cased: unique per organization.
    name_key text NOT NULL,
    version integer NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, id),
    UNIQUE (org, name_key)
  );
  CREATE INDEX resources_by_creation ON resources (org, created_at, id);
`;

// Connected tools (`tools/postgres.ts`): a tool's credentials (sealed) and payment events go with it. OAuth states in flight and refresh locks expire: Redis.
const TOOLS = `
  CREATE TABLE tools (
    id text PRIMARY KEY,
    org text NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL
  );
  CREATE INDEX tools_by_org ON tools (org, created_at, id);

  CREATE TABLE tool_credentials (
    tool_id text PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE,
    sealed jsonb NOT NULL
  );

  CREATE TABLE tool_payment_events (
    tool_id text NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    event_id text NOT NULL,
    payment_id text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (tool_id, event_id)
  );
  CREATE INDEX tool_payment_events_by_payment ON tool_payment_events (tool_id, payment_id);
`;

// The replies of commands the conversation actors applied under an idempotency key (`actors/postgres.ts`); the actor's state in Redis keeps only their digests.
const ACTOR_REPLIES = `
  CREATE TABLE actor_replies (
    actor text NOT NULL,
    key_digest text NOT NULL,
    reply jsonb NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (actor, key_digest)
  );
  CREATE INDEX actor_replies_by_expiry ON actor_replies (expires_at);
`;

// Chat messaging: channels (credentials sealed in the body), templates, credits, the message log and the inbox's conversation index.
const MESSAGING = `
  CREATE TABLE channels (
    id text PRIMARY KEY,
    org text NOT NULL,
    -- The claim on a WhatsApp number: one channel per phone number id, across organizations (null for web chat).
    phone_number_id text UNIQUE,
    kind text NOT NULL,
    created_at text NOT NULL,
    body jsonb NOT NULL
  );
  CREATE INDEX channels_by_org ON channels (org, created_at, id);

  CREATE TABLE templates (
    org text NOT NULL,
    channel_id text NOT NULL,
    name text NOT NULL,
    language text NOT NULL,
    source text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, channel_id, name, language)
  );

  -- The balance and the sequence of its ledger; the row is the lock every change of the organization's credits takes.
  CREATE TABLE credit_balances (
    org text PRIMARY KEY,
    balance bigint NOT NULL,
    seq bigint NOT NULL
  );
  CREATE TABLE credit_ledger (
    org text NOT NULL,
    seq bigint NOT NULL,
    at text NOT NULL,
    kind text NOT NULL,
    amount bigint NOT NULL,
    balance bigint NOT NULL,
    reference text,
    PRIMARY KEY (org, seq)
  );
  -- Held ('reserved') or given back after a send failed ('refunded'); \`at\` (ms) bounds how long they are remembered.
  CREATE TABLE credit_reservations (
    org text NOT NULL,
    id text NOT NULL,
    amount bigint NOT NULL,
    state text NOT NULL,
    at bigint NOT NULL,
    PRIMARY KEY (org, id)
  );
  CREATE INDEX credit_reservations_by_age ON credit_reservations (at);
  CREATE TABLE credit_top_ups (
    org text NOT NULL,
    id text NOT NULL,
    at bigint NOT NULL,
    PRIMARY KEY (org, id)
  );
  CREATE INDEX credit_top_ups_by_age ON credit_top_ups (at);

  CREATE TABLE chat_sessions (
    org text NOT NULL,
    session_id text NOT NULL,
    audience_external_id text NOT NULL,
    opened_at text NOT NULL,
    PRIMARY KEY (org, session_id)
  );
  CREATE INDEX chat_sessions_by_contact ON chat_sessions (org, audience_external_id, opened_at);

  -- The biggest table, only ever appended to (statuses update in place). \`seq\` is the recorded order;
  -- \`created_at\` grows with it, so the BRIN index (a few pages for millions of rows) finds the rows
  -- older than a retention cutoff without a scan, and pruning is a range delete.
  CREATE TABLE session_messages (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org text NOT NULL,
    id text NOT NULL,
    session_id text NOT NULL,
    network_id text,
    status text,
    created_at timestamptz NOT NULL DEFAULT now(),
    body jsonb NOT NULL,
    -- The message's readable text (its caption for media without one), folded as the embedded FTS5 index folds it.
    search tsvector GENERATED ALWAYS AS (
      to_tsvector('simple', sb_fold(coalesce(body->'content'->>'text', body->'content'->>'caption', '')))
    ) STORED
  );
  CREATE UNIQUE INDEX session_messages_by_id ON session_messages (org, id);
  CREATE INDEX session_messages_by_session ON session_messages (org, session_id, seq);
  CREATE INDEX session_messages_by_network_id ON session_messages (org, network_id) WHERE network_id IS NOT NULL;
  CREATE INDEX session_messages_by_age ON session_messages USING brin (created_at);
  CREATE INDEX session_messages_search ON session_messages USING gin (search);

  CREATE TABLE conversations (
    org text NOT NULL,
    audience_external_id text NOT NULL,
    status text NOT NULL,
    assignee_id text,
    updated_at text NOT NULL,
    queued_at text,
    version bigint NOT NULL,
    body jsonb NOT NULL,
    -- The inbox's views, generated from the record (as the embedded database does): the one view a
    -- conversation is in, its channel's number, and the key of the longest-waiting order.
    lane text GENERATED ALWAYS AS (
      CASE WHEN status = 'assigned' THEN 'assigned' WHEN status = 'queued' THEN 'waiting'
        WHEN body->>'sessionStatus' = 'resolved' THEN 'resolved' ELSE 'bot' END) STORED,
    phone_number_id text GENERATED ALWAYS AS (split_part(audience_external_id, ':', 2)) STORED,
    waiting_since text GENERATED ALWAYS AS (coalesce(queued_at, updated_at)) STORED,
    PRIMARY KEY (org, audience_external_id)
  );
  CREATE INDEX conversations_by_update ON conversations (org, updated_at DESC, audience_external_id);
  CREATE INDEX conversations_by_lane ON conversations (org, lane, updated_at DESC, audience_external_id);
  CREATE INDEX conversations_by_lane_waiting ON conversations (org, lane, waiting_since, audience_external_id);
  CREATE INDEX conversations_by_waiting ON conversations (org, waiting_since, audience_external_id);
  CREATE INDEX conversations_by_phone_number ON conversations (org, phone_number_id, updated_at DESC, audience_external_id);
  CREATE INDEX conversations_by_status ON conversations (org, status, updated_at DESC, audience_external_id);
  CREATE INDEX conversations_queued ON conversations (org, queued_at, audience_external_id) WHERE status = 'queued';
  CREATE INDEX conversations_by_assignee ON conversations (org, assignee_id, updated_at DESC) WHERE status = 'assigned';
  -- What each user has opened of each conversation (users times contacts: a table, not \`records\`).
  CREATE TABLE conversation_markers (
    org text NOT NULL,
    user_id text NOT NULL,
    audience_external_id text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, user_id, audience_external_id)
  );
`;

// The sandbox network's own records, when it runs clustered: it stands for Meta's side, so its tables keep apart from the service's.
const SANDBOX = `
  CREATE TABLE sandbox_accounts (
    phone_number_id text PRIMARY KEY,
    business_account_id text NOT NULL,
    body jsonb NOT NULL
  );
  CREATE INDEX sandbox_accounts_by_business ON sandbox_accounts (business_account_id);
  CREATE TABLE sandbox_templates (
    waba text NOT NULL,
    name text NOT NULL,
    language text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (waba, name, language)
  );
  CREATE TABLE sandbox_inbound (
    phone_number_id text NOT NULL,
    customer text NOT NULL,
    at bigint NOT NULL,
    PRIMARY KEY (phone_number_id, customer)
  );
  CREATE TABLE sandbox_messages (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    pair text NOT NULL,
    body jsonb NOT NULL
  );
  CREATE INDEX sandbox_messages_by_pair ON sandbox_messages (pair, seq);
  CREATE TABLE sandbox_media (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    body jsonb NOT NULL
  );
`;

// A ticket's activity (as the embedded database's step 5): creation, changes and comments in the order written; tickets made before get their creation entered.
const TICKET_ACTIVITY = `
  CREATE TABLE ticket_activity (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org text NOT NULL,
    ticket_id text NOT NULL,
    body jsonb NOT NULL
  );
  CREATE INDEX ticket_activity_by_ticket ON ticket_activity (org, ticket_id, seq);
  INSERT INTO ticket_activity (org, ticket_id, body)
    SELECT org, ticket_id, jsonb_build_object('id', gen_random_uuid()::text, 'ticketId', ticket_id, 'organizationId', org, 'kind', 'created',
      'actor', coalesce(body->'createdBy', 'null'::jsonb), 'at', body->'createdAt')
    FROM tickets ORDER BY org, seq;
`;

// The conversation actors' durable timers (the bot's fallback): when each conversation is next due, for the sweeper.
const CONVERSATION_TIMERS = `
  ALTER TABLE conversations ADD COLUMN due_at text GENERATED ALWAYS AS (body->>'dueAt') STORED;
  CREATE INDEX conversations_due ON conversations (due_at) WHERE due_at IS NOT NULL;
`;

// Canned replies (`canned-replies/postgres.ts`), as the embedded database's step 7.
const CANNED_REPLIES = `
  CREATE TABLE canned_replies (
    org text NOT NULL,
    id text NOT NULL,
    short_code text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, id),
    UNIQUE (org, short_code)
  );
`;

// An organization's labels and what each is on (as the embedded database's step 8).
const LABELS = `
  CREATE TABLE labels (
    org text NOT NULL,
    id text NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    color text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (org, id)
  );
  CREATE UNIQUE INDEX labels_by_name ON labels (org, name_key);
  CREATE TABLE labelled (
    org text NOT NULL,
    kind text NOT NULL,
    target text NOT NULL,
    label_id text NOT NULL,
    added_at text NOT NULL,
    PRIMARY KEY (org, kind, label_id, target)
  );
  CREATE INDEX labelled_by_target ON labelled (org, kind, target);
`;

// Web chat: a channel's visitors (each a contact of the channel) and their tokens, by hash only.
const WEBCHAT = `
  CREATE TABLE webchat_visitors (
    channel_id text NOT NULL,
    id text NOT NULL,
    org text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (channel_id, id)
  );
  CREATE TABLE webchat_tokens (
    hash text PRIMARY KEY,
    org text NOT NULL,
    channel_id text NOT NULL,
    visitor_id text NOT NULL,
    created_at text NOT NULL
  );
  CREATE INDEX webchat_tokens_by_visitor ON webchat_tokens (channel_id, visitor_id);
`;

// Contacts are found by their custom attributes' values too (as the embedded database's step 10): the generated search column is made again with them.
// Conversations past their response-time target (as the embedded database's step 13). for the views' sla=breached filter.
const RESPONSE_TARGETS = `
  ALTER TABLE conversations ADD COLUMN sla_breached_at text GENERATED ALWAYS AS (body->'sla'->>'breachedAt') STORED;
  CREATE INDEX conversations_sla_breached ON conversations (org, sla_breached_at) WHERE sla_breached_at IS NOT NULL;
`;

const CONTACT_ATTRIBUTE_SEARCH = `
  CREATE FUNCTION sb_attribute_text(a jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(a) = 'object' THEN coalesce((SELECT string_agg(value, ' ') FROM jsonb_each_text(a)), '') ELSE '' END
  $$;
  ALTER TABLE contacts DROP COLUMN search;
  ALTER TABLE contacts ADD COLUMN search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', sb_fold(coalesce(body->>'name', '') || ' ' || sb_attribute_text(body->'attributes')) || ' ' || split_part(audience_external_id, ':', 1))
  ) STORED;
  CREATE INDEX contacts_search ON contacts USING gin (search);
`;

// An organization's messages newest first, so a search for a common word reads the newest few
// thousand of them instead of every match the GIN index holds (search/postgres.ts).
const MESSAGES_BY_ORG = `
  CREATE INDEX session_messages_by_org ON session_messages (org, seq);
`;

// Web chat attachments (as the embedded database's step 11): each file's record and bytes.
const WEBCHAT_ATTACHMENTS = `
  CREATE TABLE webchat_attachments (
    channel_id text NOT NULL,
    id text NOT NULL,
    org text NOT NULL,
    body jsonb NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (channel_id, id)
  );
`;

// Teams, and the team whose queue a conversation is in (as the embedded database's step 13).
const TEAMS = `
  CREATE TABLE teams (
    org text NOT NULL,
    id text NOT NULL,
    name_key text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (org, id),
    UNIQUE (org, name_key)
  );
  ALTER TABLE conversations ADD COLUMN team_id text GENERATED ALWAYS AS (body->>'teamId') STORED;
  CREATE INDEX conversations_by_team ON conversations (org, team_id, lane, waiting_since, audience_external_id) WHERE team_id IS NOT NULL;
`;

// The fencing epoch of the owner that kept a reply: a stale owner's put never replaces a newer owner's.
const ACTOR_REPLY_EPOCHS = `
  ALTER TABLE actor_replies ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
`;

// Search text for less: a message's is computed once, when it is appended (its content never
// changes, and a generated column was computed again by every status write, three per send, each
// rewriting the row). A contact's attribute text is the same function in PL/pgSQL: a SQL function
// with a subquery is not inlined, and PostgreSQL planned its body again for every statement that
// wrote a contact (about 50 µs of the server's CPU per new contact); PL/pgSQL keeps its plan for
// the connection and returns at once for a contact with no attributes. Same result either way.
const SEARCH_TEXT_ON_WRITE = `
  CREATE FUNCTION sb_message_search(b jsonb) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('simple', sb_fold(coalesce(b->'content'->>'text', b->'content'->>'caption', '')))
  $$;
  ALTER TABLE session_messages ALTER COLUMN search DROP EXPRESSION;
  -- A writer that leaves the column out (a node of the previous release during a rolling upgrade)
  -- still gets it filled; the append sets it, so the trigger's function is not called for it.
  CREATE FUNCTION sb_message_search_fill() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.search := sb_message_search(NEW.body);
      RETURN NEW;
    END
  $$;
  CREATE TRIGGER session_messages_search_fill BEFORE INSERT ON session_messages
    FOR EACH ROW WHEN (NEW.search IS NULL) EXECUTE FUNCTION sb_message_search_fill();
  CREATE OR REPLACE FUNCTION sb_attribute_text(a jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    BEGIN
      IF jsonb_typeof(a) = 'object' THEN
        RETURN coalesce((SELECT string_agg(value, ' ') FROM jsonb_each_text(a)), '');
      END IF;
      RETURN '';
    END
  $$;
`;

// A chat-network customer's ids (as the embedded database's step 15): each id the network showed
// for a person, and the canonical id of the contact it belongs to.
const CONTACT_IDS = `
  CREATE TABLE contact_ids (
    org text NOT NULL,
    id text NOT NULL,
    canonical text NOT NULL,
    PRIMARY KEY (org, id)
  );
  CREATE INDEX contact_ids_by_canonical ON contact_ids (org, canonical);
`;

// Contacts are found by the ids the chat network shows of them too (as the embedded database's step
// 16): username, business-scoped user id and phone, each split at its periods into words.
const CONTACT_ID_SEARCH = `
  ALTER TABLE contacts DROP COLUMN search;
  ALTER TABLE contacts ADD COLUMN search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', sb_fold(coalesce(body->>'name', '') || ' ' || sb_attribute_text(body->'attributes')) || ' ' || split_part(audience_external_id, ':', 1)
      || ' ' || translate(coalesce(body->>'username', '') || ' ' || coalesce(body->>'userId', '') || ' ' || coalesce(body->>'phone', '') || ' ' || split_part(audience_external_id, ':', 1), '.', ' '))
  ) STORED;
  CREATE INDEX contacts_search ON contacts USING gin (search);
`;

export const NODE_PG_MIGRATIONS: PgMigration[] = [
  { version: 1, name: 'records', sql: SEARCH + CORE + WEBHOOKS + TOOLS + ACTOR_REPLIES + MESSAGING + SANDBOX },
  { version: 2, name: 'ticket activity', sql: TICKET_ACTIVITY },
  { version: 3, name: 'conversation timers', sql: CONVERSATION_TIMERS },
  { version: 4, name: 'canned replies', sql: CANNED_REPLIES },
  { version: 5, name: 'labels', sql: LABELS },
  { version: 6, name: 'webchat', sql: WEBCHAT },
  { version: 7, name: 'contact attribute search', sql: CONTACT_ATTRIBUTE_SEARCH },
  { version: 8, name: 'messages by organization', sql: MESSAGES_BY_ORG },
  { version: 9, name: 'webchat attachments', sql: WEBCHAT_ATTACHMENTS },
  { version: 10, name: 'response targets', sql: RESPONSE_TARGETS },
  { version: 11, name: 'teams', sql: TEAMS },
  { version: 12, name: 'actor reply epochs', sql: ACTOR_REPLY_EPOCHS },
  { version: 13, name: 'search text on write', sql: SEARCH_TEXT_ON_WRITE },
  { version: 14, name: 'contact ids', sql: CONTACT_IDS },
  { version: 15, name: 'contact id search', sql: CONTACT_ID_SEARCH },
];
