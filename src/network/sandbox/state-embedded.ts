import type { EmbeddedDb } from '../../store/index.js';
import { SANDBOX_CONVERSATION_KEEP, SANDBOX_MEDIA_KEEP, type SandboxAccount, type SandboxMedia, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';

/**
 * Accounts, templates and windows are durable in the embedded db (channels
 * refer to them across restarts); message scrollback and the customer's
 * media files are memory only.
 */
export function createEmbeddedSandboxState(db: EmbeddedDb): SandboxState {
  const messages = new Map<string, SandboxMessage>();
  const media = new Map<string, SandboxMedia>();
  const conversations = new Map<string, string[]>();
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
      if (!messages.has(m.id)) {
        const list = conversations.get(k) ?? [];
        list.push(m.id);
        while (list.length > SANDBOX_CONVERSATION_KEEP) messages.delete(list.shift()!);
        conversations.set(k, list);
      }
      messages.set(m.id, m);
    },
    async updateMessage(m) {
      if (!messages.has(m.id)) return false;
      messages.set(m.id, m);
      return true;
    },
    async getMessage(id) {
      return messages.get(id) ?? null;
    },
    async conversation(pnid, customer, limit) {
      const ids = conversations.get(pair(pnid, customer)) ?? [];
      return ids.slice(-limit).map((id) => messages.get(id)!).filter(Boolean);
    },
    async putMedia(m) {
      media.set(m.id, m);
      // Maps iterate in insertion order: the first key is the oldest file.
      while (media.size > SANDBOX_MEDIA_KEEP) media.delete(media.keys().next().value!);
    },
    async getMedia(id) {
      return media.get(id) ?? null;
    },
  };
}
