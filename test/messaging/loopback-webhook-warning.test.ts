import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../src/log.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { fakeGraphApp, FAKE_TOKEN } from './fake-graph.js';
import { listen } from './http-helpers.js';
import { op, startMessagingService } from './messaging-helpers.js';

/** A logger that keeps the warnings. */
function warnings(): { log: Logger; lines: { msg: string; channelId?: string }[] } {
  const lines: { msg: string; channelId?: string }[] = [];
  const log = createLogger('warn', {}, (line, level) => {
    if (level === 'warn') lines.push(JSON.parse(line) as { msg: string; channelId?: string });
  });
  return { log, lines };
}

/** A Graph (Meta) channel's webhook URL on a loopback address is said at start-up: the network could never reach it. */
describe('start-up warning for a Graph channel whose webhook URL is loopback', () => {
  let graph: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    graph = await listen(fakeGraphApp([]));
  });
  afterAll(async () => {
    await graph?.close();
  });
  const graphChannel = async (svc: TestService) => {
    const org = await svc.createOrg('Graph');
    const ch = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, {
      kind: 'whatsapp_cloud',
      name: 'Prod',
      network: 'graph',
      phoneNumberId: String(100000000000000 + Math.floor(Math.random() * 1e12)),
      businessAccountId: '102290129340398',
      accessToken: FAKE_TOKEN,
      appSecret: 'the-app-secret',
      verifyToken: 'the-verify-token',
    });
    expect(ch.status).toBe(201);
    return ch.body.id as string;
  };
  const env = () => ({ GRAPH_API_BASE_URL: `${graph.url}/v27.0`, GRAPH_API_TIMEOUT_MS: '500' });

  it('embedded: after a restart without PUBLIC_URL the channel is named; with a public PUBLIC_URL nothing is said', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-loopback-'));
    try {
      const first = await startMessagingService({ env: { ...env(), DATA_DIR: dir } });
      const channelId = await graphChannel(first);
      await first.close();
      const w = warnings();
      const again = await startMessagingService({ env: { ...env(), DATA_DIR: dir }, log: w.log });
      await again.close();
      expect(w.lines.filter((l) => l.msg.includes('loopback')).map((l) => l.channelId)).toEqual([channelId]);
      const quiet = warnings();
      const behindDomain = await startMessagingService({ env: { ...env(), DATA_DIR: dir, PUBLIC_URL: 'https://switchboard.example.com' }, log: quiet.log });
      await behindDomain.close();
      expect(quiet.lines.filter((l) => l.msg.includes('loopback'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  describe('clustered', () => {
    const servers = useClusterServers();
    it('a node that starts while a Graph channel exists, without PUBLIC_URL, names it', async () => {
      const cluster = { ...env(), ...servers.env(`lw${Date.now() % 100000}`), ACTOR_PARTITIONS: '4', SECRETS_KEY: '7'.repeat(64) };
      const n1 = await startMessagingService({ env: { ...cluster, NODE_ID: 'w1' } });
      try {
        const channelId = await graphChannel(n1);
        const w = warnings();
        const n2 = await startMessagingService({ env: { ...cluster, NODE_ID: 'w2' }, log: w.log });
        await n2.close();
        expect(w.lines.filter((l) => l.msg.includes('loopback')).map((l) => l.channelId)).toContain(channelId);
      } finally {
        await n1.close();
      }
    }, 60_000);
  });
});
