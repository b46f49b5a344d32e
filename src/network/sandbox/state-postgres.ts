import { numbered, type PgDb } from '../../store/index.js';
import { sandboxCustomerRecords, sandboxMessageSql } from './state-sql.js';
import { SANDBOX_CONVERSATION_KEEP, SANDBOX_MEDIA_KEEP, type SandboxAccount, type SandboxMedia, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';

const sql = sandboxMessageSql('sandbox_messages');
const UPDATE = numbered(sql.update);
const GET = numbered(sql.get);
const LATEST = numbered(sql.latest);
const TRIM = numbered(sql.trim);

const byNameAndLanguage = (a: SandboxTemplate, b: SandboxTemplate) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language);

/**
 * The sandbox network's state in PostgreSQL (clustered mode, when the
 * sandbox is asked for), so every node serves the same simulated network:
 * the `sandbox_*` tables, apart from the service's own. Like the embedded
 * adapter it keeps the newest `SANDBOX_CONVERSATION_KEEP` messages of each
 * conversation and the newest `SANDBOX_MEDIA_KEEP` files.
 */
export function createPostgresSandboxState(db: PgDb): SandboxState {
  const pair = (pnid: string, customer: string) => `${pnid}/${customer}`;
  const accounts = async (where: string, args: unknown[]) =>
    (await db.rows<{ body: SandboxAccount }>(`SELECT body FROM sandbox_accounts ${where} ORDER BY phone_number_id`, args)).map((r) => r.body);
  return {
    async putAccount(a) {
      await db.query(
        'INSERT INTO sandbox_accounts (phone_number_id, business_account_id, body) VALUES ($1, $2, $3) ON CONFLICT (phone_number_id) DO UPDATE SET business_account_id = excluded.business_account_id, body = excluded.body',
        [a.phoneNumberId, a.businessAccountId, JSON.stringify(a)],
      );
    },
    async getAccount(pnid) {
      return (await accounts('WHERE phone_number_id = $1', [pnid]))[0] ?? null;
    },
    async accountsOfBusiness(waba) {
      return accounts('WHERE business_account_id = $1', [waba]);
    },
    async listAccounts() {
      return accounts('', []);
    },
    async putTemplate(waba, t) {
      await db.query('INSERT INTO sandbox_templates (waba, name, language, body) VALUES ($1, $2, $3, $4) ON CONFLICT (waba, name, language) DO UPDATE SET body = excluded.body', [
        waba,
        t.name,
        t.language,
        JSON.stringify(t),
      ]);
    },
    async listTemplates(waba) {
      return (await db.rows<{ body: SandboxTemplate }>('SELECT body FROM sandbox_templates WHERE waba = $1', [waba])).map((r) => r.body).sort(byNameAndLanguage);
    },
    async getTemplate(waba, name, language) {
      const rows = await db.rows<{ body: SandboxTemplate }>('SELECT body FROM sandbox_templates WHERE waba = $1 AND name = $2 AND language = $3', [waba, name, language]);
      return rows[0]?.body ?? null;
    },
    async deleteTemplates(waba, name, language) {
      const r = await db.query('DELETE FROM sandbox_templates WHERE waba = $1 AND name = $2 AND ($3::text IS NULL OR language = $3)', [waba, name, language ?? null]);
      return r.rowCount ?? 0;
    },
    async noteInbound(pnid, customer, at) {
      // The later time stays: webhooks and taps may race.
      await db.query(
        'INSERT INTO sandbox_inbound (phone_number_id, customer, at) VALUES ($1, $2, $3) ON CONFLICT (phone_number_id, customer) DO UPDATE SET at = greatest(sandbox_inbound.at, excluded.at)',
        [pnid, customer, at],
      );
    },
    async lastInbound(pnid, customer) {
      const rows = await db.rows<{ at: string }>('SELECT at FROM sandbox_inbound WHERE phone_number_id = $1 AND customer = $2', [pnid, customer]);
      return rows[0] === undefined ? null : Number(rows[0].at);
    },
    async putMessage(m) {
      const k = pair(m.phoneNumberId, m.customer);
      // xmax = 0: the row was inserted, not updated (a new message: the conversation is trimmed).
      const r = await db.rows<{ inserted: boolean }>(
        'INSERT INTO sandbox_messages (id, pair, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET body = excluded.body RETURNING (xmax = 0) AS inserted',
        [m.id, k, JSON.stringify(m)],
      );
      if (r[0]?.inserted === true) await db.query(TRIM, [k, k, SANDBOX_CONVERSATION_KEEP]);
    },
    async updateMessage(m) {
      return (await db.query(UPDATE, [JSON.stringify(m), m.id])).rowCount === 1;
    },
    async getMessage(id) {
      return (await db.rows<{ body: SandboxMessage }>(GET, [id]))[0]?.body ?? null;
    },
    async conversation(pnid, customer, limit) {
      return (await db.rows<{ body: SandboxMessage }>(LATEST, [pair(pnid, customer), limit])).reverse().map((r) => r.body);
    },
    async putMedia(m) {
      await db.query('INSERT INTO sandbox_media (id, body) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET body = excluded.body', [m.id, JSON.stringify(m)]);
      await db.query('DELETE FROM sandbox_media WHERE seq <= (SELECT seq FROM sandbox_media ORDER BY seq DESC LIMIT 1 OFFSET $1)', [SANDBOX_MEDIA_KEEP]);
    },
    async getMedia(id) {
      return (await db.rows<{ body: SandboxMedia }>('SELECT body FROM sandbox_media WHERE id = $1', [id]))[0]?.body ?? null;
    },
    ...sandboxCustomerRecords(db),
  };
}
