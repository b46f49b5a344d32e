import { describe, expect, it } from 'vitest';
import { useClusterServers } from '../harness/use-servers.js';
import { op, startMessagingService } from './messaging-helpers.js';

describe('clustered without SECRETS_KEY', () => {
  const servers = useClusterServers();

  it('starts, but refuses to store chat-network credentials it could not encrypt; web chat still works', async () => {
    const svc = await startMessagingService({ env: { ...servers.env('nokey'), SANDBOX_NETWORK: 'true' } });
    try {
      const org = await svc.createOrg('NoKey');
      const wa = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'WA', network: 'sandbox' });
      expect(wa.status).toBe(503);
      expect(wa.body.error.code).toBe('secrets_key_missing');
      expect((await op(svc, 'GET', `/admin/v1/organizations/${org.id}/channels`)).body.channels).toEqual([]);
      const web = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, { kind: 'web_chat', name: 'Site' });
      expect(web.status).toBe(201);
      const keys = await (await import('../../src/store/index.js')).connectRedis(servers.redis.url);
      try {
        expect(await keys.keys('nokey:channel-phone:*')).toEqual([]);
      } finally {
        await keys.quit();
      }
    } finally {
      await svc.close();
    }
  });
});
