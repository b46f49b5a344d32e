/*
 * The label store's statements both engines run as written (`?`
 * placeholders; PostgreSQL's adapter numbers them).
 */

const COLUMNS = 'id, org AS "organizationId", name, color, created_at AS "createdAt"';

export const SELECT_LABELS = `SELECT ${COLUMNS} FROM labels WHERE org = ? ORDER BY name_key, id`;
export const SELECT_LABEL = `SELECT ${COLUMNS} FROM labels WHERE org = ? AND id = ?`;
export const COUNT_LABELS = 'SELECT COUNT(*) AS n FROM labels WHERE org = ?';
/** Args: org, id, name, name key, colour, created at. A taken name key inserts nothing. */
export const INSERT_LABEL = 'INSERT INTO labels (org, id, name, name_key, color, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
export const DELETE_LABEL = 'DELETE FROM labels WHERE org = ? AND id = ?';
export const DELETE_LABELLED = 'DELETE FROM labelled WHERE org = ? AND label_id = ?';
/** Args: org, kind, target, label id, seq. */
export const ATTACH = 'INSERT INTO labelled (org, kind, target, label_id, added_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
export const DETACH = 'DELETE FROM labelled WHERE org = ? AND kind = ? AND target = ? AND label_id = ?';
