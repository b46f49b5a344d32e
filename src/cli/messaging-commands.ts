/* eslint-disable @typescript-eslint/no-explicit-any -- results are the API's JSON, shown as text */
/**
 * Operator CLI commands for chat messaging: channels, template registries and
 * credits. Merged into the command table of `admin.ts`.
 *
 *   npm run admin -- channel create --org <id> --name "Support" --kind whatsapp_cloud --network sandbox
 *   npm run admin -- credits top-up --org <id> --amount 500
 */

import { table } from './table.js';

interface MessagingCommand {
  usage: string;
  required: string[];
  run(flags: Record<string, string>): { method: string; path: string; body?: unknown };
  show(result: any): string;
}

const org = (f: Record<string, string>) => `/admin/v1/organizations/${encodeURIComponent(f.org!)}`;
const channel = (f: Record<string, string>) => `${org(f)}/channels/${encodeURIComponent(f.channel!)}`;
/** `--messages-per-second` as a number when it is one (else as given, for the API to refuse clearly). */
const tier = (f: Record<string, string>) => {
  const v = f['messages-per-second'];
  if (v === undefined) return {};
  return { messagesPerSecond: /^\d+$/.test(v) ? Number(v) : v };
};

function showChannel(c: any): string {
  const lines = [`channel ${c.id} (${c.kind}${c.network ? ', ' + c.network : ''}) ${c.name}`];
  if (c.phoneNumberId) lines.push(`phone number id ${c.phoneNumberId}, business account ${c.businessAccountId}${c.displayPhoneNumber ? ', +' + c.displayPhoneNumber : ''}`);
  if (c.messagesPerSecond !== undefined) lines.push(`throughput tier: ${c.messagesPerSecond} messages per second`);
  if (c.webhook) lines.push(`webhook URL: ${c.webhook.url}`);
  if (c.webhook?.verifyToken) lines.push(`verify token: ${c.webhook.verifyToken}   (shown once: enter it with the URL in Meta's app dashboard)`);
  if (c.templateSync) lines.push(c.templateSync.ok ? `templates synced: ${c.templateSync.synced}` : `template sync failed: ${c.templateSync.error} (run: template sync)`);
  return lines.join('\n');
}

export const messagingCommands: Record<string, MessagingCommand> = {
  'channel create': {
    usage:
      '--org <id> --name <name> --kind <whatsapp_cloud|web_chat> [--network <sandbox|graph>] [--phone-number-id <id>] [--business-account-id <id>] [--access-token <token>] [--app-secret <secret>] [--verify-token <token>] [--display-phone <digits>] [--messages-per-second <n>] [--origins <url,url>]',
    required: ['org', 'name', 'kind'],
    run: (f) => {
      if (f.kind === 'web_chat') {
        return { method: 'POST', path: `${org(f)}/channels`, body: { kind: 'web_chat', name: f.name, allowedOrigins: f.origins ? f.origins.split(',').map((o) => o.trim()) : [] } };
      }
      const body: Record<string, unknown> = { kind: f.kind, name: f.name, network: f.network ?? 'graph' };
      const map: [string, string][] = [
        ['phone-number-id', 'phoneNumberId'],
        ['business-account-id', 'businessAccountId'],
        ['access-token', 'accessToken'],
        ['app-secret', 'appSecret'],
        ['verify-token', 'verifyToken'],
        ['display-phone', 'displayPhoneNumber'],
      ];
      for (const [flag, field] of map) if (f[flag] !== undefined) body[field] = f[flag];
      return { method: 'POST', path: `${org(f)}/channels`, body: { ...body, ...tier(f) } };
    },
    show: showChannel,
  },
  'channel list': {
    usage: '--org <id>',
    required: ['org'],
    run: (f) => ({ method: 'GET', path: `${org(f)}/channels` }),
    show: (r) => table(r.channels, ['id', 'kind', 'network', 'phoneNumberId', 'name']),
  },
  'channel update': {
    usage: '--org <id> --channel <id> [--name <name>] [--access-token <token>] [--app-secret <secret>] [--verify-token <token>] [--messages-per-second <n>]',
    required: ['org', 'channel'],
    run: (f) => ({
      method: 'PATCH',
      path: channel(f),
      body: {
        ...Object.fromEntries(
          ([['name', 'name'], ['access-token', 'accessToken'], ['app-secret', 'appSecret'], ['verify-token', 'verifyToken']] as const).filter(([k]) => f[k] !== undefined).map(([k, v]) => [v, f[k]]),
        ),
        ...tier(f),
      },
    }),
    show: showChannel,
  },
  'channel delete': {
    usage: '--org <id> --channel <id>',
    required: ['org', 'channel'],
    run: (f) => ({ method: 'DELETE', path: channel(f) }),
    show: () => 'channel deleted',
  },
  'template sync': {
    usage: '--org <id> --channel <id>',
    required: ['org', 'channel'],
    run: (f) => ({ method: 'POST', path: `${channel(f)}/templates/sync` }),
    show: (r) => `synced ${r.synced} template(s), removed ${r.removed}\n` + table(r.templates, ['name', 'language', 'category', 'status']),
  },
  'template list': {
    usage: '--org <id> --channel <id>',
    required: ['org', 'channel'],
    run: (f) => ({ method: 'GET', path: `${channel(f)}/templates` }),
    show: (r) => table(r.templates, ['name', 'language', 'category', 'status', 'source']),
  },
  'template add': {
    usage: '--org <id> --channel <id> --definition <json: {name, language, category, status?, components}>',
    required: ['org', 'channel', 'definition'],
    run: (f) => ({ method: 'POST', path: `${channel(f)}/templates`, body: JSON.parse(f.definition!) as unknown }),
    show: (t) => `template ${t.name} (${t.language}) ${t.category} ${t.status}`,
  },
  'template delete': {
    usage: '--org <id> --channel <id> --template <name> --language <code>',
    required: ['org', 'channel', 'template', 'language'],
    run: (f) => ({ method: 'DELETE', path: `${channel(f)}/templates/${encodeURIComponent(f.template!)}/${encodeURIComponent(f.language!)}` }),
    show: () => 'template removed from the registry',
  },
  'credits show': {
    usage: '--org <id>',
    required: ['org'],
    run: (f) => ({ method: 'GET', path: `${org(f)}/credits` }),
    show: (c) => `balance ${c.balance} credits; template prices: ${Object.entries(c.prices as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(', ')}`,
  },
  'credits top-up': {
    usage: '--org <id> --amount <credits> [--operation-id <id>]',
    required: ['org', 'amount'],
    run: (f) => ({ method: 'POST', path: `${org(f)}/credits/top-up`, body: { amount: Number(f.amount), ...(f['operation-id'] ? { operationId: f['operation-id'] } : {}) } }),
    show: (c) => (c.applied ? `balance now ${c.balance} credits` : `already applied (operation id seen before); balance ${c.balance}`),
  },
};
