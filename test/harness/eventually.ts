/**
 * Polls `check` every 50 ms until it holds (another node's remembered read
 * lapsed, a background job ran): waited for, never timed. Fails after
 * `timeoutMs` (default 20 s) naming `what`.
 */
export async function eventually(check: () => Promise<boolean> | boolean, opts: { timeoutMs?: number; what?: string } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${opts.what ?? 'condition'} not seen within ${opts.timeoutMs ?? 20_000} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
