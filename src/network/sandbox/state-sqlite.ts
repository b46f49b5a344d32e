import type { SqliteDb } from '../../store/index.js';
import { sandboxCustomerRecords, sandboxMessageSql } from './state-sql.js';
import { SANDBOX_CONVERSATION_KEEP, SANDBOX_MEDIA_KEEP, type SandboxAccount, type SandboxMedia, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';

/**
 * The sandbox network's state in its own SQLite database (it stands for a
 * system outside the service, so it is not in the node's database):
 * accounts, templates and windows in `records`, the message history in
 * `messages`, the newest `SANDBOX_CONVERSATION_KEEP` of each conversation.
 * The customer's media files stay in memory (the newest
 * `SANDBOX_MEDIA_KEEP`): uploads for a demo, not history.
 */
export function createSqliteSandboxState(db: SqliteDb): SandboxState {
  const media = new Map<string, SandboxMedia>();
  const sql = sandboxMessageSql('messages');
  const pair = (pnid: string, customer: string) => `${pnid}/${customer}`;
  const tkey = (waba: string, t: { name: string; language: string }) => `${waba}/${t.name}/${t.language}`;
  return {
    async putAccount(a) {
      await db.put('sbxAccounts', a.phoneNumberId, a);
    },
    async getAccount(pnid) {
      return db.get<SandboxAccount>('sbxAccounts', pnid) ?? null;
    },
    async accountsOfBusiness(waba) {
      return [...db.values<SandboxAccount>('sbxAccounts')].filter((a) => a.businessAccountId === waba);
    },
    async listAccounts() {
      return [...db.values<SandboxAccount>('sbxAccounts')];
    },
    async putTemplate(waba, t) {
      await db.put('sbxTemplates', tkey(waba, t), { ...t, waba });
    },
    async listTemplates(waba) {
      return [...db.entries<SandboxTemplate & { waba: string }>('sbxTemplates')]
        .filter(([, t]) => t.waba === waba)
        .map(([, t]) => {
          const { waba: _w, ...rest } = t;
          return rest as SandboxTemplate;
        })
        .sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
    },
    async getTemplate(waba, name, language) {
      const t = db.get<SandboxTemplate & { waba: string }>('sbxTemplates', tkey(waba, { name, language }));
      if (t === undefined) return null;
      const { waba: _w, ...rest } = t;
      return rest as SandboxTemplate;
    },
    async deleteTemplates(waba, name, language) {
      const doomed = [...db.entries<SandboxTemplate & { waba: string }>('sbxTemplates')]
        .filter(([, t]) => t.waba === waba && t.name === name && (language === undefined || t.language === language))
        .map(([k]) => k);
      await db.write(doomed.map((key) => ({ coll: 'sbxTemplates', key, delete: true })));
      return doomed.length;
    },
    async noteInbound(pnid, customer, at) {
      const k = pair(pnid, customer);
      if ((db.get<number>('sbxInbound', k) ?? 0) < at) await db.put('sbxInbound', k, at);
    },
    async lastInbound(pnid, customer) {
      return db.get<number>('sbxInbound', pair(pnid, customer)) ?? null;
    },
    async putMessage(m) {
      const k = pair(m.phoneNumberId, m.customer);
      await db.run(() => {
        const updated = db.stmt(sql.update).run(JSON.stringify(m), m.id);
        if (updated.changes > 0) return;
        db.stmt('INSERT INTO messages (id, pair, body) VALUES (?, ?, ?)').run(m.id, k, JSON.stringify(m));
        db.stmt(sql.trim).run(k, k, SANDBOX_CONVERSATION_KEEP);
      });
    },
    async updateMessage(m) {
      return db.run(() => db.stmt(sql.update).run(JSON.stringify(m), m.id).changes > 0);
    },
    async getMessage(id) {
      const row = db.stmt(sql.get).get(id) as { body: string } | undefined;
      return row === undefined ? null : (JSON.parse(row.body) as SandboxMessage);
    },
    async conversation(pnid, customer, limit) {
      const rows = db.stmt(sql.latest).all(pair(pnid, customer), limit) as { body: string }[];
      return rows.reverse().map((r) => JSON.parse(r.body) as SandboxMessage);
    },
    async putMedia(m) {
      media.set(m.id, m);
      // Maps iterate in insertion order: the first key is the oldest file.
      while (media.size > SANDBOX_MEDIA_KEEP) media.delete(media.keys().next().value!);
    },
    async getMedia(id) {
      return media.get(id) ?? null;
    },
    ...sandboxCustomerRecords(db),
  };
}
