import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The official MCP conformance runner against the gateway, as part of the
 * test command (so CI runs it). The script installs its pinned Node 24 and
 * runner from the npm registry into a cache outside the repository once.
 */
describe('MCP conformance (@modelcontextprotocol/conformance)', () => {
  it('passes server-initialize, ping, tools-list, tools-call-error and dns-rebinding-protection', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/mcp-conformance.ts'], { encoding: 'utf8', timeout: 280_000 });
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output).toBe(0);
    for (const s of ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'dns-rebinding-protection']) expect(output).toMatch(new RegExp(`^PASS  ${s} `, 'm'));
    expect(output).toContain('all 5 scenarios passed');
  }, 300_000);

  it('the deployed service (the entry point as its own process, no fixture) passes all but tools-call-error, which needs the fixture tool', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/mcp-conformance.ts', '--deployed'], { encoding: 'utf8', timeout: 400_000 });
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output).toBe(0);
    for (const s of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(output).toMatch(new RegExp(`^PASS  ${s} `, 'm'));
    expect(output).toMatch(/^FAIL {2}tools-call-error /m);
    expect(output).toContain('Unknown tool: test_error_handling');
    expect(output).toContain('conformance (the deployed service): every scenario as expected');
  }, 420_000);
});
