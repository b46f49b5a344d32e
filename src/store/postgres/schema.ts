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

export const NODE_PG_MIGRATIONS: PgMigration[] = [{ version: 1, name: 'records', sql: SEARCH + CORE + ACTOR_REPLIES }];
