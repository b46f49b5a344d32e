/**
 * A node-local memory of values read from a shared store, each good for
 * `freshMs` (node-local monotonic time) after it was read: for lookups every
 * request makes and that change rarely (an API key and its user, a channel,
 * a template, the webhook registrations of an organization).
 *
 * Guarantees:
 * - A change made through this node is seen at once: the adapter calls
 *   `forget` after its write, and a read that was under way meanwhile is not
 *   remembered (it may predate the change).
 * - A change made on another node is seen within `freshMs`.
 * - Only what `remember` returns true for is kept (adapters keep "not found"
 *   out, so something new is found at once).
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private generation = 0;

  constructor(
    private readonly freshMs: number,
    private readonly maxEntries = 1000,
  ) {}

  async get(key: string, read: () => Promise<V>, remember: (v: V) => boolean = () => true): Promise<V> {
    const now = performance.now();
    const hit = this.entries.get(key);
    if (hit !== undefined && now - hit.at < this.freshMs) return hit.value;
    const generation = this.generation;
    const value = await read();
    if (generation === this.generation && remember(value)) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { value, at: now });
    } else this.entries.delete(key);
    return value;
  }

  /** Drops the entries `stale` picks (all without it); reads under way are not remembered. */
  forget(stale?: (key: string, value: V) => boolean): void {
    this.generation++;
    if (stale === undefined) this.entries.clear();
    else for (const [key, e] of this.entries) if (stale(key, e.value)) this.entries.delete(key);
  }
}
