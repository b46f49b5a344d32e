/**
 * The operator CLI: a thin client of the operator API.
 *
 *   npm run admin -- org create --name "Acme"
 *   npm run admin -- key create --org <id> --user <id> --scopes tickets:read,tickets:create --json
 *   npm run admin -- backup --out backup.db [--data-dir DIR]
 *
 * `backup` is the one local command: it copies the embedded node's SQLite
 * database (DATA_DIR/switchboard.db) while the service runs.
 *
 * Connection: --url / SB_URL (default http://localhost:3000), --token /
 * SB_OPERATOR_TOKEN: the names the first start's banner prints in its
 * `export` line (SWITCHBOARD_URL / SWITCHBOARD_OPERATOR_TOKEN, the older
 * names, are still read when the new ones are unset).
 *
 * Local commands (`operator reset-token`, `storage import-redis`) do not talk
 * to the API: they open the store of the configured mode (DATA_DIR, or
 * DATABASE_URL and REDIS_URL) themselves.
 */
import { parseArgs } from 'node:util';
import { SCOPES } from '../domain/scopes.js';
import { PASSWORD_RULE } from '../domain/password-rule.js';
import { messagingCommands } from './messaging-commands.js';
import { table } from './table.js';
import { toolsCommands } from './tools-commands.js';
import { backupNodeDb } from '../store/sqlite/backup.js';
import type { LocalCommand } from './local-command.js';

interface ApiCommand {
  usage: string;
  required: string[];
  run(flags: Record<string, string>): { method: string; path: string; body?: unknown };
  /** Human-readable one-liner for a successful result. */
  show(result: any): string; // eslint-disable-line @typescript-eslint/no-explicit-any
}

type Command = ApiCommand | LocalCommand;

const org = (f: Record<string, string>) => `/admin/v1/organizations/${encodeURIComponent(f.org!)}`;

/** Command table: `<noun> <verb>` → request. Later capabilities add entries here. */
export const commands: Record<string, Command> = {
  'org create': {
    usage: '--name <name>',
    required: ['name'],
    run: (f) => ({ method: 'POST', path: '/admin/v1/organizations', body: { name: f.name } }),
    show: (o) => `organization ${o.id} (${o.name})`,
  },
  'org list': {
    usage: '',
    required: [],
    run: () => ({ method: 'GET', path: '/admin/v1/organizations' }),
    show: (r) => table(r.organizations, ['id', 'name', 'createdAt']),
  },
  'user create': {
    usage: `--org <id> --email <email> --name <name> --role admin|agent --password <password, ${PASSWORD_RULE}>`,
    required: ['org', 'email', 'name', 'role', 'password'],
    run: (f) => ({ method: 'POST', path: `${org(f)}/users`, body: { email: f.email, name: f.name, role: f.role, password: f.password } }),
    show: (u) => `user ${u.id} ${u.email} (${u.role})`,
  },
  'user list': {
    usage: '--org <id>',
    required: ['org'],
    run: (f) => ({ method: 'GET', path: `${org(f)}/users` }),
    show: (r) => table(r.users, ['id', 'email', 'role', 'name']),
  },
  'user reset-password': {
    usage: `--org <id> --user <id> --password <new password, ${PASSWORD_RULE}>`,
    required: ['org', 'user', 'password'],
    run: (f) => ({ method: 'POST', path: `${org(f)}/users/${encodeURIComponent(f.user!)}/password`, body: { password: f.password } }),
    show: (r) => `password reset; ${r.sessionsEnded} session(s) ended`,
  },
  'key create': {
    usage: `--org <id> --user <id> --scopes <scope,scope|all> [--name <label>]   scopes: ${SCOPES.join(', ')}`,
    required: ['org', 'user', 'scopes'],
    run: (f) => ({
      method: 'POST',
      path: `${org(f)}/api-keys`,
      body: { userId: f.user, scopes: f.scopes === 'all' ? [...SCOPES] : f.scopes!.split(',').map((s) => s.trim()).filter(Boolean), ...(f.name ? { name: f.name } : {}) },
    }),
    show: (k) => `key ${k.id} for user ${k.userId}\nscopes: ${k.scopes.join(' ')}\n\n  ${k.key}\n\nThis is the only time the key is shown.`,
  },
  'key list': {
    usage: '--org <id>',
    required: ['org'],
    run: (f) => ({ method: 'GET', path: `${org(f)}/api-keys` }),
    show: (r) => table(r.apiKeys, ['id', 'prefix', 'userId', 'name', 'revokedAt', 'lastUsedAt']),
  },
  'key revoke': {
    usage: '--org <id> --key <key id>',
    required: ['org', 'key'],
    run: (f) => ({ method: 'DELETE', path: `${org(f)}/api-keys/${encodeURIComponent(f.key!)}` }),
    show: (k) => `key ${k.id} revoked at ${k.revokedAt}`,
  },
  'contact create': {
    usage: '--org <id> --aeid <phone:phoneNumberId> [--name <name>]',
    required: ['org', 'aeid'],
    run: (f) => ({ method: 'POST', path: `${org(f)}/contacts`, body: { audienceExternalId: f.aeid, ...(f.name ? { name: f.name } : {}) } }),
    show: (c) => `contact ${c.id} ${c.audienceExternalId}`,
  },
  'contact list': {
    usage: '--org <id>',
    required: ['org'],
    run: (f) => ({ method: 'GET', path: `${org(f)}/contacts` }),
    show: (r) => table(r.contacts, ['id', 'audienceExternalId', 'name']),
  },
  ...messagingCommands,
  'operator reset-token': {
    usage: '(local: on DATA_DIR with the service stopped, or on REDIS_URL while nodes run)',
    required: [],
    local: async (ctx) => (await import('./operator-reset.js')).resetOperatorTokenCommand(ctx),
  },
  'webhooks listen': {
    usage: '--forward-to <http://localhost:4000/hook> [--events <type,type>] [--key <API key, or SB_KEY>] [--secret <whsec_…>]',
    required: ['forward-to'],
    local: async (ctx) => (await import('./webhooks-listen.js')).webhooksListenCommand(ctx),
  },
  ...toolsCommands,
  'storage import-redis': {
    usage: '[--verify-only]  [--remove-missing]   (local: copies a clustered deployment\'s records from Redis into PostgreSQL, then verifies them)',
    required: [],
    local: async (ctx) => (await import('./storage-import.js')).importRedisCommand(ctx),
  },
};

/** Every `--flag <value>` any command's usage names (parseArgs must know them to read their values). */
const STRING_FLAGS = [...new Set(['url', 'token', 'out', 'data-dir', ...Object.values(commands).flatMap((c) => [...c.usage.matchAll(/--([\w-]+) [^-\s]/g)].map((m) => m[1]!))])];

/** The first non-empty of the variables named, in order. */
const firstSet = (env: Record<string, string | undefined>, ...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

function usage(): string {
  return [
    'usage: npm run admin -- <command> [flags] [--json] [--url URL] [--token TOKEN]',
    '',
    ...Object.entries(commands).map(([n, c]) => `  ${n} ${c.usage}`),
    '  backup --out <file> [--data-dir <DATA_DIR>]   (embedded mode: online copy of the database, on this machine)',
  ].join('\n');
}

export async function main(argv: string[], env: Record<string, string | undefined>, out: (s: string) => void, err: (s: string) => void, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(STRING_FLAGS.map((f) => [f, { type: 'string' as const }])),
    },
  });
  if (positionals[0] === 'backup') return backup(values, env, out, err);
  const name = positionals.slice(0, 2).join(' ');
  const cmd = commands[name];
  if (values.help || !cmd) {
    (cmd ? out : err)(usage());
    return cmd || values.help ? 0 : 2;
  }
  const flags = Object.fromEntries(Object.entries(values).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  const missing = cmd.required.filter((r) => !flags[r]);
  if (missing.length > 0) {
    err(`missing ${missing.map((m) => '--' + m).join(', ')}\nusage: ${name} ${cmd.usage}`);
    return 2;
  }
  // zod is not loaded for this: it would cost every command a tenth of a second.
  const connection = () => ({
    base: (flags.url ?? firstSet(env, 'SB_URL', 'SWITCHBOARD_URL') ?? 'http://localhost:3000').replace(/\/$/, ''),
    token: flags.token ?? firstSet(env, 'SB_OPERATOR_TOKEN', 'SWITCHBOARD_OPERATOR_TOKEN'),
  });
  if (!URL.canParse(connection().base)) {
    err(`not a URL: ${connection().base} (from --url or SB_URL)`);
    return 2;
  }
  // Local commands also take switches (`--verify-only`): present means 'true'.
  const switches = Object.fromEntries(Object.entries(values).filter(([, v]) => v === true).map(([k]) => [k, 'true']));
  if ('local' in cmd) return cmd.local({ flags: { ...switches, ...flags }, env, json: values.json === true, out, err, connection, signal });
  const { base, token } = connection();
  if (!token) {
    err('no operator token: pass --token or set SB_OPERATOR_TOKEN (lost it? npm run admin -- operator reset-token)');
    return 2;
  }
  const req = cmd.run(flags);
  let res: Response;
  try {
    res = await fetch(base + req.path, {
      method: req.method,
      headers: { authorization: `Bearer ${token}`, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
    });
  } catch (e2) {
    err(`cannot reach ${base}: ${(e2 as Error).message}`);
    return 1;
  }
  const text = await res.text();
  const body = text === '' ? null : JSON.parse(text);
  if (!res.ok) {
    if (values.json) out(JSON.stringify(body));
    else err(`error ${res.status}: ${body?.error?.message ?? text}${body?.error?.details ? '\n' + JSON.stringify(body.error.details) : ''}`);
    return 1;
  }
  out(values.json ? JSON.stringify(body) : cmd.show(body));
  return 0;
}

async function backup(values: Record<string, unknown>, env: Record<string, string | undefined>, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  if (typeof values.out !== 'string') {
    err('missing --out\nusage: backup --out <file> [--data-dir <DATA_DIR>]');
    return 2;
  }
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : (firstSet(env, 'DATA_DIR') ?? './data');
  try {
    const r = await backupNodeDb(dataDir, values.out);
    out(values.json ? JSON.stringify(r) : `backup of ${r.source} written to ${r.file} (${r.bytes} bytes, schema ${r.schemaVersion}, integrity ok)`);
    return 0;
  } catch (e) {
    err(`backup failed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/').split('/').pop()!);
if (isMain) {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  main(process.argv.slice(2), process.env, (s) => process.stdout.write(s + '\n'), (s) => process.stderr.write(s + '\n'), stop.signal).then((code) => process.exit(code));
}
