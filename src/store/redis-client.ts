import { createHash } from 'node:crypto';
import { createClient } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;

/**
 * Connects a node-redis client. Reconnects with capped backoff; commands
 * issued while disconnected wait in the offline queue rather than fail, up to
 * the reconnect strategy's patience.
 */
export async function connectRedis(url: string, name = 'switchboard'): Promise<RedisClient> {
  const client = createClient({
    url,
    name,
    socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2000), connectTimeout: 5000 },
  });
  // Errors surface on the commands that hit them; without a listener node-redis would crash the process.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * A Lua script run by EVALSHA, loading it on NOSCRIPT (after a restart or
 * failover of Redis). Scripts are how multi-key changes stay atomic.
 */
export class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    try {
      return await client.evalSha(this.sha, options);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('NOSCRIPT')) return client.eval(this.source, options);
      throw e;
    }
  }
}

/** Key builder for organization-scoped keys: the `{o:<id>}` hash tag keeps one organization's keys in one slot. */
export function orgKeys(prefix: string, organizationId: string) {
  const base = `${prefix}:{o:${organizationId}}`;
  return (...parts: string[]) => [base, ...parts].join(':');
}
