import type { createClient, createCluster } from 'redis';
import type { NodeRedis, RedisClient } from '../redis/client.js';

/**
 * The Redis of a deployment that kept every record there, read-only: the
 * readers only ever SCAN, GET and read ranges, never write or delete.
 */
export interface RedisImportSource {
  /** The node's client: reads of one key are routed by it, also on a cluster. */
  client: RedisClient;
  /** KEY_PREFIX of the deployment (`sb` by default). */
  prefix: string;
  /** Every key matching the glob, in batches; on Redis Cluster from every master. A key may come more than once (SCAN's promise is at least once). */
  scan(match: string): AsyncIterable<string[]>;
}

type SingleClient = ReturnType<typeof createClient>;
type ClusterClient = ReturnType<typeof createCluster>;

const SCAN_COUNT = 1000;

export function redisImportSource(redis: NodeRedis, prefix: string): RedisImportSource {
  return {
    client: redis.client,
    prefix,
    async *scan(match) {
      if (redis.target.kind === 'single') {
        yield* (redis.client as unknown as SingleClient).scanIterator({ MATCH: match, COUNT: SCAN_COUNT });
        return;
      }
      // SCAN walks one server's keyspace: each master holds its own slots.
      const cluster = redis.client as unknown as ClusterClient;
      for (const master of cluster.masters) {
        const node = await cluster.nodeClient(master);
        yield* node.scanIterator({ MATCH: match, COUNT: SCAN_COUNT });
      }
    },
  };
}

/** `s` as a literal inside a SCAN glob. */
export function globLiteral(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** `s` as a literal inside a regular expression. */
export function regexLiteral(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, (c) => `\\${c}`);
}

/**
 * The keys of one kind, `<prefix>:<shape>`, where `shape` is a glob whose
 * `*`s capture (for instance `{o:*}:user:*` gives the organization and the
 * user id). Organization ids never hold `}`: the first capture of `{o:*}`
 * stops there.
 */
export function keyShape(prefix: string, shape: string): { glob: string; parse(key: string): string[] | null } {
  const parts = shape.split('*');
  const re = new RegExp(
    '^' +
      regexLiteral(`${prefix}:`) +
      parts.map((p, i) => regexLiteral(p) + (i < parts.length - 1 ? (p.endsWith('{o:') || p.endsWith('{t:') ? '([^}]+)' : '(.+)') : '')).join('') +
      '$',
  );
  return {
    glob: globLiteral(`${prefix}:`) + parts.map(globLiteral).join('*'),
    parse(key) {
      const m = re.exec(key);
      return m === null ? null : m.slice(1);
    },
  };
}

/** A string record read from Redis: its key's captures and its value. */
export interface FoundValue {
  parts: string[];
  value: string;
}

/** The string values of every key of one shape (whose captures `accept` takes), in batches (keys gone between the scan and the read are skipped, repeats within a batch dropped). */
export async function* scanValues(src: RedisImportSource, shape: string, accept: (parts: string[]) => boolean = () => true): AsyncIterable<FoundValue[]> {
  const { glob, parse } = keyShape(src.prefix, shape);
  for await (const batch of src.scan(glob)) {
    const keys = [...new Set(batch)].filter((k) => {
      const parts = parse(k);
      return parts !== null && accept(parts);
    });
    if (keys.length === 0) continue;
    // One GET per key: the keys of a batch sit in different slots.
    const values = await Promise.all(keys.map((k) => src.client.get(k)));
    const out: FoundValue[] = [];
    keys.forEach((k, i) => {
      const v = values[i];
      if (v !== null && v !== undefined) out.push({ parts: parse(k)!, value: v });
    });
    if (out.length > 0) yield out;
  }
}

/** The keys of one shape with their captures, in batches (values read by the caller: lists, sets, hashes). */
export async function* scanKeys(src: RedisImportSource, shape: string): AsyncIterable<{ key: string; parts: string[] }[]> {
  const { glob, parse } = keyShape(src.prefix, shape);
  for await (const batch of src.scan(glob)) {
    const out = [...new Set(batch)].flatMap((key) => {
      const parts = parse(key);
      return parts === null ? [] : [{ key, parts }];
    });
    if (out.length > 0) yield out;
  }
}
