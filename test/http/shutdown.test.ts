import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTestService } from '../harness/service.js';
import { messagingOrg, orderUpdate } from '../messaging/messaging-helpers.js';

/**
 * A graceful stop of an embedded node: every module stops before the node's
 * database closes (a module that closed the shared database early left the
 * rest, the actors' lease releases first, writing to a closed one).
 */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('stopping an embedded node', () => {
  it('stops every module before the database closes: nothing is warned or fails on the way down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-shutdown-'));
    dirs.push(dir);
    const problems: string[] = [];
    const log = createLogger('warn', {}, (line) => problems.push(line));
    const svc = await startTestService({ env: { DATA_DIR: dir }, log });
    // Some of every kind of state: a conversation (actors, events, messages) and connected-tool settings.
    const org = await messagingOrg(svc, 'Shutdown', 10);
    expect((await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4915900000201') })).status).toBe(201);
    problems.length = 0;
    await svc.close();
    expect(problems).toEqual([]);
  });
});
