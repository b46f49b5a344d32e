import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestService, type TestService } from '../harness/service.js';

const run = promisify(execFile);
const redoclyCli = join(createRequire(import.meta.url).resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js');

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[];
}

/** `redocly lint` with its recommended rules on `doc`, offline (no telemetry, no update check). */
async function redoclyLint(doc: unknown): Promise<LintReport> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-openapi-lint-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    // An explicit config, so a redocly.yaml found elsewhere cannot change the rules.
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
    const out = await run(process.execPath, [redoclyCli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json', '--max-problems', '1000'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout?: string; stderr?: string }) => {
      // A failed lint exits 1 and still prints its report.
      if (typeof e.stdout === 'string' && e.stdout.includes('"totals"')) return { stdout: e.stdout, stderr: e.stderr ?? '' };
      throw e;
    });
    const json = out.stdout.slice(out.stdout.indexOf('{'), out.stdout.lastIndexOf('}') + 1);
    return JSON.parse(json) as LintReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the OpenAPI document, as tools read it', () => {
  let svc: TestService;
  let doc: { servers?: unknown[]; info: Record<string, unknown>; paths: Record<string, Record<string, { operationId?: string }>> };
  beforeAll(async () => {
    svc = await startTestService();
    doc = (await svc.call('GET', '/openapi.json')).body;
  });
  afterAll(() => svc?.close());

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const report = await redoclyLint(doc);
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location.map((l) => l.pointer).join(' ')}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('names every operation once, in camelCase, and says where the API is and under what licence', () => {
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids.length).toBeGreaterThan(50);
    expect(ids.filter((id) => typeof id !== 'string' || !/^[a-z][a-zA-Z0-9]*$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.servers).toEqual([expect.objectContaining({ url: expect.any(String) })]);
    expect(doc.info.license).toMatchObject({ name: expect.any(String) });
  });

  it('names PUBLIC_URL as the server when it is set', async () => {
    const other = await startTestService({ env: { PUBLIC_URL: 'https://support.example.com/' } });
    try {
      expect((await other.call('GET', '/openapi.json')).body.servers).toEqual([{ url: 'https://support.example.com' }]);
    } finally {
      await other.close();
    }
  });
});
