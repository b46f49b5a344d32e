/**
 * The README and the docs run as printed.
 *
 * Every ```sh block of README.md and docs/*.md runs, in the order printed, against one fresh
 * embedded instance (`src/main.ts` as its own process, a temporary DATA_DIR, a free port). Each
 * page starts from what the first start's banner prints (SB_URL, SB_KEY, SB_OPERATOR_TOKEN,
 * SB_CHANNEL, plus SB_ADMIN_EMAIL and SB_ADMIN_PASSWORD from its admin login, and the DATA_DIR the
 * service was started with) and carries the
 * variables its blocks `export` from one block to the next, as one terminal would. A block fails the
 * test, naming the page, the block's line and its output, when it exits non-zero; blocks run with
 * `set -euo pipefail`, and `curl` fails on an HTTP error (`--fail-with-body`, so the body is shown).
 *
 * What a page says about a block, in an HTML comment on the line before its fence:
 *
 *   <!-- docs-test: skip (needs the internet) -->      not run; the reason is required
 *   <!-- docs-test: http-errors (shows a refusal) -->  run, but an HTTP error is not a failure
 *
 * Only ```sh blocks run: output is shown in ```text / ```json blocks. `npm run admin` runs the CLI
 * from source (the same `main` as scripts/admin.mjs, without compiling dist/ first), and processes a
 * block leaves in the background are stopped after its page.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_SANDBOX_PORTS } from '../process/launch.js';

const root = join(import.meta.dirname, '..', '..');

export interface DocBlock {
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  code: string;
  skip: string | null;
  httpErrors: boolean;
}

const MARKER = /^<!--\s*docs-test:\s*(skip|http-errors)\s*(?:\((.*)\))?\s*-->\s*$/;

/** The ```sh blocks of a Markdown page, with what the comment before each says. */
export function shellBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    if (open[2] === 'sh') {
      let prev = i - 1;
      while (prev >= 0 && lines[prev]!.trim() === '') prev--;
      const marker = prev >= 0 ? MARKER.exec(lines[prev]!.trim()) : null;
      if (marker && marker[1] === 'skip' && !marker[2]) throw new Error(`${file}:${prev + 1}: a docs-test skip needs its reason in parentheses`);
      blocks.push({
        file,
        line: i + 1,
        code: lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n'),
        skip: marker?.[1] === 'skip' ? marker[2]! : null,
        httpErrors: marker?.[1] === 'http-errors',
      });
    }
    i = end;
  }
  return blocks;
}

/** README.md, then the docs index, then every other page of docs/ by name. */
export function docPages(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .sort();
  return ['README.md', 'docs/README.md', ...docs.map((f) => `docs/${f}`)];
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

interface Run {
  code: number | null;
  output: string;
}

describe('the README and docs run as printed', () => {
  const work = mkdtempSync(join(tmpdir(), 'sb-docs-'));
  const bin = join(work, 'bin');
  let service: ChildProcess;
  let banner = '';
  const base: Record<string, string> = {};
  const groups: number[] = [];

  beforeAll(async () => {
    // `npm run admin -- …` from source; any other npm command goes to the real npm.
    mkdirSync(bin);
    const pathWithoutShims = JSON.stringify(process.env.PATH ?? '');
    writeFileSync(
      join(bin, 'admin-from-source.mjs'),
      [
        `const { main } = await import(${JSON.stringify(join(root, 'src', 'cli', 'admin.ts'))});`,
        'const stop = new AbortController();',
        "for (const s of ['SIGINT', 'SIGTERM']) process.once(s, () => stop.abort());",
        "process.exit(await main(process.argv.slice(2), process.env, (s) => process.stdout.write(s + '\\n'), (s) => process.stderr.write(s + '\\n'), stop.signal));",
      ].join('\n'),
    );
    const tsx = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
    writeFileSync(
      join(bin, 'npm'),
      [
        '#!/usr/bin/env bash',
        'if [ "${1:-}" = run ] && [ "${2:-}" = admin ]; then',
        '  shift 2; while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; [ $# -gt 0 ] && shift # npm\'s own options (--silent)',
        `  exec node --import ${JSON.stringify(tsx)} ${JSON.stringify(join(bin, 'admin-from-source.mjs'))} "$@"`,
        'fi',
        // Anything else (npm start, npm ci, npm test) would install, build or start a second service
        // in the repository: such a block must say docs-test: skip.
        'echo "docs test: only npm run admin runs here; mark this block <!-- docs-test: skip (why) -->" >&2',
        'exit 97',
      ].join('\n'),
    );
    // curl fails on HTTP errors, showing the body (blocks marked http-errors opt out).
    writeFileSync(
      join(bin, 'curl'),
      [
        '#!/usr/bin/env bash',
        `real=$(PATH=${pathWithoutShims} command -v curl)`,
        'if [ "${SB_DOCS_HTTP_ERRORS:-0}" = 1 ]; then exec "$real" "$@"; fi',
        'exec "$real" --fail-with-body "$@"',
      ].join('\n'),
    );
    chmodSync(join(bin, 'npm'), 0o755);
    chmodSync(join(bin, 'curl'), 0o755);

    const port = await freePort();
    service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(work, 'data'), LOG_LEVEL: 'warn', SANDBOX_STATUS_DELAY_MS: '20', ...FREE_SANDBOX_PORTS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.stdout!.on('data', (d: Buffer) => (banner += d.toString()));
    service.stderr!.on('data', (d: Buffer) => (banner += d.toString()));
    const deadline = Date.now() + 50_000;
    while (!/export SB_CHANNEL=\S+/.test(banner)) {
      if (service.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start:\n${banner}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const m of banner.matchAll(/\b(SB_[A-Z_]+)=(\S+)/g)) base[m[1]!] = m[2]!;
    const login = /admin login\s*:\s*(\S+) \/ (\S+)/.exec(banner);
    base.SB_ADMIN_EMAIL = login![1]!;
    base.SB_ADMIN_PASSWORD = login![2]!;
    // The terminal that started the service has its DATA_DIR (for `npm run admin -- backup`).
    base.DATA_DIR = join(work, 'data');
  }, 60_000);

  afterAll(async () => {
    for (const g of groups) killGroup(g);
    if (service && service.exitCode === null) {
      const exited = new Promise((r) => service.once('exit', r));
      service.kill('SIGTERM');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  function killGroup(pgid: number): void {
    try {
      process.kill(-pgid, 'SIGTERM');
    } catch {
      // already gone
    }
  }

  /** The tails of the *.log files the page's blocks wrote in the repository's root: what a background process said. */
  function logsWrittenSince(since: number): string {
    return readdirSync(root)
      .filter((f) => f.endsWith('.log') && statSync(join(root, f)).mtimeMs >= since - 1000)
      .map((f) => `\n--- ${f} (last 30 lines) ---\n${readFileSync(join(root, f), 'utf8').split('\n').slice(-30).join('\n')}`)
      .join('');
  }

  /** Runs one block in bash, in the repository's root, from the state file the previous block left. */
  function runBlock(block: DocBlock, state: string): Promise<Run> {
    const script = [
      'set -euo pipefail',
      `source ${JSON.stringify(state)}`,
      block.httpErrors ? 'export SB_DOCS_HTTP_ERRORS=1' : 'export SB_DOCS_HTTP_ERRORS=0',
      block.code,
      `export -p > ${JSON.stringify(state)}`,
    ].join('\n');
    return new Promise((resolve) => {
      const child = spawn('bash', ['-c', script], {
        cwd: root,
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, TMPDIR: work },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: what it leaves running is stopped after the page
      });
      groups.push(child.pid!);
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => killGroup(child.pid!), 30_000);
      // 'exit', not 'close': a process the block left in the background may still hold the pipes.
      child.once('exit', (code) => {
        clearTimeout(timer);
        setTimeout(() => resolve({ code, output }), 20);
      });
    });
  }

  for (const page of docPages()) {
    const blocks = shellBlocks(page, readFileSync(join(root, page), 'utf8'));
    const runnable = blocks.filter((b) => b.skip === null);
    it.skipIf(runnable.length === 0)(`${page}: ${runnable.length} block(s) run, ${blocks.length - runnable.length} skipped`, async () => {
      const state = join(work, `${page.replace(/\W/g, '_')}.env`);
      writeFileSync(state, Object.entries(base).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n') + '\n');
      const started = Date.now();
      try {
        for (const block of runnable) {
          const run = await runBlock(block, state);
          const logs = run.code === 0 ? '' : logsWrittenSince(started);
          expect(run.code, `${relative(root, join(root, block.file))}:${block.line}: the block exited with ${run.code}\n--- block ---\n${block.code}\n--- output ---\n${run.output}${logs}`).toBe(0);
        }
      } finally {
        for (const g of groups.splice(0)) killGroup(g);
      }
    }, 120_000);
  }
});
