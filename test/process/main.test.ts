import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../harness/servers.js';
import { launch, waitFor, waitHealthy } from './launch.js';

/** The real entry point as a process: config errors, first start, SIGTERM, restart. Each process start compiles through tsx: generous limits for a busy machine. */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the service process', () => {
  it('refuses a bad configuration with a message naming the variable', async () => {
    const { output, exited } = launch({ PORT: 'eighty', DATA_DIR: ':memory:' });
    expect(await exited).toBe(78);
    expect(output()).toContain('PORT');
    const nats = launch({ NATS_URL: 'nats://127.0.0.1:1', DATA_DIR: ':memory:' });
    expect(await nats.exited).toBe(78);
    expect(nats.output()).toContain('REDIS_URL');
  }, 300_000);

  it('refuses to start on a damaged database, naming the file and what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-main-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'switchboard.db'), 'not a database at all, '.repeat(20));
    const { output, exited } = launch({ PORT: String(await freePort()), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' });
    expect(await exited).toBe(74);
    expect(output()).toContain(`${join(dir, 'switchboard.db')} is not a SQLite database`);
    expect(output()).toContain('restore the latest backup');
  });

  it('seeds a demo once, finishes an in-flight request on SIGTERM, and keeps acknowledged data across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-main-'));
    dirs.push(dir);
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' };
    const first = launch(env);
    await waitFor(() => /SB_KEY=(org_\S+)/.test(first.output()));
    const key = /SB_KEY=(org_\S+)/.exec(first.output())![1]!;
    const operator = /SB_OPERATOR_TOKEN=(op_\S+)/.exec(first.output())![1]!;
    const base = `http://127.0.0.1:${port}`;
    await waitHealthy(base);
    const created: any = await (await fetch(`${base}/v1/tickets`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'persist me', description: 'd' }) })).json();
    expect(created.ticketId).toMatch(/^T-/);

    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const body = JSON.stringify({ subject: 'in flight', description: 'sent across a SIGTERM' });
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    let response = '';
    sock.on('data', (d) => (response += d));
    sock.write(`POST /v1/tickets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 200));
    first.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    sock.write(body.slice(10));
    await waitFor(() => response.includes('\r\n\r\n{'));
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    expect(await first.exited).toBe(0);
    sock.destroy();

    const second = launch(env);
    await waitHealthy(base);
    const list: any = await (await fetch(`${base}/v1/tickets`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(list.tickets.map((t: any) => t.title)).toEqual(['in flight', 'persist me']);
    expect(second.output()).not.toContain('SB_KEY=');
    const orgs: any = await (await fetch(`${base}/admin/v1/organizations`, { headers: { authorization: `Bearer ${operator}` } })).json();
    expect(orgs.organizations).toHaveLength(1);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 300_000);
});
