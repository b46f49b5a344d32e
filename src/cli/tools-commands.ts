/* eslint-disable @typescript-eslint/no-explicit-any -- results are the API's JSON, shown as text */
/**
 * Operator CLI commands for connected tools: the origins a connect
 * `return_url` may point at. Merged into the command table of `admin.ts`.
 *
 *   npm run admin -- tools allow-origin --origin https://app.example.com
 */

interface ToolsCommand {
  usage: string;
  required: string[];
  run(flags: Record<string, string>): { method: string; path: string; body?: unknown };
  show(result: any): string;
}

const showOrigins = (r: any) => (r.origins.length === 0 ? '(no return origins allowed)' : r.origins.map((o: string) => `${o}${r.configured.includes(o) ? '  (TOOLS_ALLOWED_RETURN_ORIGINS)' : ''}`).join('\n'));

export const toolsCommands: Record<string, ToolsCommand> = {
  'tools origins': {
    usage: '',
    required: [],
    run: () => ({ method: 'GET', path: '/admin/v1/tools/return-origins' }),
    show: showOrigins,
  },
  'tools allow-origin': {
    usage: '--origin <https://app.example.com>',
    required: ['origin'],
    run: (f) => ({ method: 'POST', path: '/admin/v1/tools/return-origins', body: { origin: f.origin } }),
    show: showOrigins,
  },
  'tools disallow-origin': {
    usage: '--origin <https://app.example.com>',
    required: ['origin'],
    run: (f) => ({ method: 'DELETE', path: `/admin/v1/tools/return-origins?origin=${encodeURIComponent(f.origin!)}` }),
    show: (r) => `${r.removed ? 'removed' : 'was not added with allow-origin (configured origins change with TOOLS_ALLOWED_RETURN_ORIGINS)'}\n${showOrigins(r)}`,
  },
};
