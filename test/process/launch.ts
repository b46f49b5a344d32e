import { spawn, type ChildProcess } from 'node:child_process';

/** The sandboxes' own origins on free ports: processes started side by side must not all take the fixed defaults. */
export const FREE_SANDBOX_PORTS = { SANDBOX_GRAPH_PORT: '0', SANDBOX_GOOGLE_PORT: '0', SANDBOX_GOOGLE_OAUTH_PORT: '0', SANDBOX_STRIPE_PORT: '0' };

/** The real entry point (`src/main.ts` through tsx) as a child process, its stdout and stderr collected; the sandboxes on free ports unless `env` says otherwise. */
export function launch(env: Record<string, string>): { proc: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { PATH: process.env.PATH, ...FREE_SANDBOX_PORTS, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

/** Waits only (nothing asserts timing): a start compiles the service through tsx, which takes tens of seconds on a loaded machine. */
export async function waitFor(check: () => boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function waitHealthy(base: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${base} never became healthy`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
