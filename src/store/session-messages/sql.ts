/*
 * The message log's statements both engines run as written (`?`
 * placeholders; PostgreSQL's adapter numbers them): the tables are the same
 * in the node's SQLite database and in PostgreSQL.
 */

const SESSION_COLUMNS = 'session_id AS "sessionId", org AS "organizationId", audience_external_id AS "audienceExternalId", opened_at AS "openedAt"';

/** A session, by organization and id. */
export const SELECT_SESSION = `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE org = ? AND session_id = ?`;
/** A contact's sessions, newest first. */
export const SELECT_CONTACT_SESSIONS = `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE org = ? AND audience_external_id = ? ORDER BY opened_at DESC`;
/** Records a session unless it is known: the first registration wins. Args: org, session id, contact, opened at. */
export const REGISTER_SESSION = 'INSERT INTO chat_sessions (org, session_id, audience_external_id, opened_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING';
/**
 * Appends a message unless its `_id` is stored: one row per (org, id). Args: org, id, session id, network id, status, body.
 * The embedded adapter's only: PostgreSQL's append also writes the message's search column (`APPEND` in postgres.ts).
 */
export const INSERT_MESSAGE = 'INSERT INTO session_messages (org, id, session_id, network_id, status, body) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
export const SELECT_MESSAGE = 'SELECT body FROM session_messages WHERE org = ? AND id = ?';
/** The first message stored with a network id. */
export const SELECT_BY_NETWORK_ID = 'SELECT body FROM session_messages WHERE org = ? AND network_id = ? ORDER BY seq LIMIT 1';
/** A session's messages in the order they were recorded. */
export const SELECT_SESSION_MESSAGES = 'SELECT body FROM session_messages WHERE org = ? AND session_id = ? ORDER BY seq';
