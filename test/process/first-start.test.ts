import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../harness/servers.js';
import { main as adminCli } from '../../src/cli/admin.js';
import { launch, waitFor, waitHealthy } from './launch.js';

/** Losing the first start's credentials, and the way back in. Three to four process starts per test: generous limits for a busy machine. */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await adminCli(args, env, (s) => out.push(s), (s) => err.push(s));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const get = async (url: string, token: string) => (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status;

describe('first start and the operator token', () => {
  it('a first start that cannot listen (REST or MCP port taken) saves nothing: the next start prints demo credentials that work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-first-'));
    dirs.push(dir);
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    const failed = launch({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' });
    expect(await failed.exited).toBe(1);
    expect(failed.output()).toContain('EADDRINUSE');
    expect(failed.output()).not.toContain('SB_KEY=');
    // The same when the REST port is free but the MCP gateway's own port is taken.
    const mcpFailed = launch({ PORT: String(await freePort()), MCP_PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' });
    expect(await mcpFailed.exited).toBe(1);
    expect(mcpFailed.output()).toContain('set MCP_PORT');
    expect(mcpFailed.output()).not.toContain('SB_KEY=');
    await new Promise<void>((r) => taken.close(() => r()));

    const free = await freePort();
    const next = launch({ PORT: String(free), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' });
    await waitFor(() => /SB_OPERATOR_TOKEN=(op_\S+)/.test(next.output()));
    const key = /SB_KEY=(org_\S+)/.exec(next.output())![1]!;
    const operator = /SB_OPERATOR_TOKEN=(op_\S+)/.exec(next.output())![1]!;
    const base = `http://127.0.0.1:${free}`;
    await waitHealthy(base);
    expect(await get(`${base}/v1/tickets`, key)).toBe(200);
    expect(await get(`${base}/admin/v1/organizations`, operator)).toBe(200);
    next.proc.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  }, 300_000);

  it('operator reset-token refuses a data dir in use, then gives a working token and retires the old one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-reset-'));
    dirs.push(dir);
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' };
    const base = `http://127.0.0.1:${port}`;
    const first = launch(env);
    await waitFor(() => /SB_OPERATOR_TOKEN=(op_\S+)/.test(first.output()));
    const old = /SB_OPERATOR_TOKEN=(op_\S+)/.exec(first.output())![1]!;
    await waitHealthy(base);

    // While the service holds the data dir, a reset would be lost (or corrupt its log): refused.
    const busy = await cli({ DATA_DIR: dir }, 'operator', 'reset-token');
    expect(busy.code).toBe(1);
    expect(busy.err).toMatch(/running on .* \(process \d+\)/);
    first.proc.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const reset = await cli({ DATA_DIR: dir }, 'operator', 'reset-token');
    expect(reset.code).toBe(0);
    const token = /export SB_OPERATOR_TOKEN=(op_\S+)/.exec(reset.out)![1]!;
    expect(token).not.toBe(old);
    // With OPERATOR_TOKEN set the service ignores a stored token, so resetting it would mislead.
    expect((await cli({ DATA_DIR: dir, OPERATOR_TOKEN: 'a-configured-operator-token' }, 'operator', 'reset-token')).code).toBe(2);

    const second = launch(env);
    await waitHealthy(base);
    expect(await get(`${base}/admin/v1/organizations`, token)).toBe(200);
    expect(await get(`${base}/admin/v1/organizations`, old)).toBe(401);
    // The CLI reads the names the banner prints.
    const listed = await cli({ SB_URL: base, SB_OPERATOR_TOKEN: token }, 'org', 'list');
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n')[0]).toMatch(/^id\s+name\s+createdAt$/);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 300_000);
});
