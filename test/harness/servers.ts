import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real redis-server and nats-server processes for tests, each on a free
 * loopback port with its own temporary directory. Never the machine's shared
 * services on the default ports.
 */

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') return reject(new Error('no port'));
      const port = addr.port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number, proc: ChildProcess, name: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${name} exited early with ${proc.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms`);
}

export interface ServerProcess {
  url: string;
  port: number;
  dir: string;
  proc: ChildProcess;
  /** SIGKILL and restart on the same port and directory (for fault tests). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startProcess(name: string, cmd: string, args: (port: number, dir: string) => string[], url: (port: number) => string): Promise<ServerProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `sb-${name}-`));
  let stderr = '';
  const launch = () => {
    const p = spawn(cmd, args(port, dir), { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
    return p;
  };
  const handle: ServerProcess = {
    url: url(port),
    port,
    dir,
    proc: launch(),
    async restart() {
      await killAndWait(handle.proc, 'SIGKILL');
      handle.proc = launch();
      await waitForPort(port, 10_000, handle.proc, name);
    },
    async stop() {
      await killAndWait(handle.proc, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitForPort(port, 10_000, handle.proc, name);
  } catch (e) {
    handle.proc.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  return handle;
}

function killAndWait(p: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    p.once('exit', () => { clearTimeout(t); resolve(); });
    p.kill(signal);
  });
}

export function startRedis(): Promise<ServerProcess> {
  return startProcess(
    'redis',
    'redis-server',
    (port, dir) => ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
    (port) => `redis://127.0.0.1:${port}`,
  );
}

export function startNats(): Promise<ServerProcess> {
  return startProcess(
    'nats',
    'nats-server',
    (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
    (port) => `nats://127.0.0.1:${port}`,
  );
}

export interface RedisClusterProcess {
  /** `redis://127.0.0.1:<port>` of every master: what REDIS_CLUSTER_NODES takes. */
  nodes: string[];
  servers: ServerProcess[];
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster of `masters` masters (no replicas) on free loopback
 * ports, each in its own temporary directory, with all 16384 slots assigned
 * by `redis-cli --cluster create`; resolves once every node reports
 * `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus gets a free port of its own (the default, port + 10000, may be taken or out of range).
      const busPort = await freePort();
      servers.push(
        await startProcess(
          'redis-cluster',
          'redis-server',
          (port, dir) => [
            '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no',
            '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-port', String(busPort), '--cluster-node-timeout', '5000',
          ],
          (port) => `redis://127.0.0.1:${port}`,
        ),
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    const deadline = Date.now() + 30_000;
    for (const s of servers) {
      for (;;) {
        const info = await run('redis-cli', ['-p', String(s.port), 'cluster', 'info']);
        if (/cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info) && new RegExp(`cluster_known_nodes:${masters}\\b`).test(info)) break;
        if (Date.now() > deadline) throw new Error(`redis cluster node ${s.port} not ok within 30 s:\n${info}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (e) {
    await Promise.all(servers.map((s) => s.stop()));
    throw e;
  }
  return {
    nodes: servers.map((s) => s.url),
    servers,
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * The directory of PostgreSQL's server programs: `initdb` on the PATH, else
 * Debian's `/usr/lib/postgresql/<major>/bin` (the package puts only its
 * client wrappers on the PATH).
 */
export function postgresBinDir(): string {
  const onPath = (process.env.PATH ?? '').split(':').find((d) => d !== '' && existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')));
  if (onPath !== undefined) return onPath;
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (majors.length === 0) throw new Error('PostgreSQL server programs not found (install the Debian package postgresql)');
  return join(root, majors[0]!, 'bin');
}

/** As root, the server runs as the `postgres` user (it refuses root): through runuser, as Debian's own scripts do. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export interface PostgresProcess extends ServerProcess {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
}

/**
 * A real PostgreSQL server on a free loopback port, its cluster made by
 * `initdb` in a temporary directory (trust authentication on loopback, the
 * socket in that directory too). `fsync=off`: a test's server never outlives
 * a power loss, and a killed server process still keeps every committed
 * transaction (the WAL is written before the commit answers).
 * `sharedBuffers`: 32MB by default, so many suites' servers fit at once; a
 * benchmark at scale passes PostgreSQL's own default (128MB), which is what
 * docker-compose.yml runs.
 */
export async function startPostgres(opts: { sharedBuffers?: string } = {}): Promise<PostgresProcess> {
  const bin = postgresBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-postgres-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, ...postgresIds());
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  await run(initCmd, initArgs);
  let stderr = '';
  const launch = () => {
    const [cmd, args] = asPostgres(join(bin, 'postgres'), [
      '-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir,
      '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200', '-c', `shared_buffers=${opts.sharedBuffers ?? '32MB'}`, '-c', 'log_min_messages=warning',
    ]);
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
    return p;
  };
  // runuser stays as the server's parent: signals go to the postmaster itself (its pid file), and runuser ends with it.
  const signal = (sig: NodeJS.Signals) => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, sig);
    } catch {
      handle.proc.kill(sig);
    }
  };
  const stopWith = (sig: NodeJS.Signals) => {
    const p = handle.proc;
    if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => { signal('SIGKILL'); p.kill('SIGKILL'); }, 5000);
      p.once('exit', () => { clearTimeout(t); resolve(); });
      signal(sig);
    });
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const handle: PostgresProcess = {
    url,
    port,
    dir,
    proc: launch(),
    async restart() {
      await stopWith('SIGKILL');
      handle.proc = launch();
      await waitForPort(port, 20_000, handle.proc, 'postgres');
    },
    async stop() {
      // SIGINT: fast shutdown (clients are disconnected; SIGTERM would wait for them).
      await stopWith('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitForPort(port, 20_000, handle.proc, 'postgres');
  } catch (e) {
    signal('SIGKILL');
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  return handle;
}

function postgresIds(): [number, number] {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error('no postgres user (install the Debian package postgresql)');
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}
