import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../src/actors/partitions.js';
import { callbackData } from '../../src/actors/conversation/send-recovery.js';
import { freePort, startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';
import { clusterEnv } from '../harness/use-servers.js';
import { launch } from './launch.js';

/**
 * Keyed template sends across an owner's crash and pause, with processes:
 * real redis-server and nats-server, three `src/main.ts` nodes, and the
 * sandbox chat network behind a proxy that adds 150 ms per round trip
 * (75 ms each way) between the nodes and the network, both for the Graph API
 * calls and for the network's status webhooks.
 *
 * The network is the sandbox served by node3 (its state in the shared Redis,
 * like every node's): every node reaches it through the proxy
 * (`SANDBOX_GRAPH_URL`), and it posts its webhooks through the proxy to
 * node3's receiver (`SANDBOX_WEBHOOK_BASE_URL`). node3 is never the one
 * killed or paused, just as the real network does not go down with an owner;
 * the victim is node1, chosen because it owns partitions of the contacts.
 * The proxy sees everything that reaches the network, so it counts the copies
 * of each send (by `biz_opaque_callback_data`) and the last status the
 * network reported for each message.
 *
 * Clients send a contact's messages one after the other with an
 * `Idempotency-Key` each, spread over the live nodes, retrying (same key,
 * next node) on 503 and transport errors. Nothing here asserts timing.
 */

const OPERATOR = 'sendonce-operator-token-0123456789';
const CONTACTS = 30;
const SENDS_PER_CONTACT = 10;
const TOP_UP = 100_000;
const STATUS_RANK: Record<string, number> = { sent: 1, delivered: 2, read: 3, failed: 4 };

interface Node {
  id: string;
  port: number;
  url: string;
  proc: ReturnType<typeof launch>['proc'];
  output: () => string;
  exited: Promise<number | null>;
  down: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(url: string, method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Forwards every request to `target`, `oneWayMs` later, and the answer back
 * `oneWayMs` after it came. A request whose caller went away (killed) is
 * still forwarded: it left the caller, so it reaches the network.
 */
/** What the test does to one exchange: lose it on the way (answered 200 to the sender, never delivered), or hold its answer back. */
type Shape = (path: string, body: Buffer) => { lose?: boolean; holdAnswerMs?: number } | undefined;

function delayProxy(target: () => string, oneWayMs: number, seen: (path: string, body: Buffer, status: number, answer: Buffer) => void, shape: Shape = () => undefined): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const how = shape(req.url!, body) ?? {};
      await sleep(oneWayMs);
      if (how.lose === true) {
        res.writeHead(200, { 'content-length': '2' });
        res.end('ok');
        return;
      }
      const url = new URL(req.url!, target());
      const headers = { ...req.headers, host: url.host };
      const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve) => {
        const out = httpRequest(url, { method: req.method, headers }, (r) => {
          void readBody(r).then((b) => resolve({ status: r.statusCode ?? 502, headers: r.headers, body: b }), () => resolve({ status: 502, headers: {}, body: Buffer.alloc(0) }));
        });
        out.on('error', () => resolve({ status: 502, headers: {}, body: Buffer.alloc(0) }));
        out.end(body);
      });
      seen(req.url!, body, answer.status, answer.body);
      await sleep(oneWayMs + (how.holdAnswerMs ?? 0));
      const h = { ...answer.headers };
      delete h['transfer-encoding'];
      delete h.connection;
      delete h['keep-alive'];
      h['content-length'] = String(answer.body.length);
      res.writeHead(answer.status, h as Record<string, string>);
      res.end(answer.body);
    })().catch(() => res.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function redisCli(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => execFile('redis-cli', ['-p', String(port), ...args], (err, out) => (err ? reject(err) : resolve(out.trim()))));
}

describe('keyed sends reach the network once across a crashed and a paused owner', () => {
  let redis: ServerProcess;
  let nats: ServerProcess;
  let postgres: PostgresProcess;
  const nodes: Node[] = [];
  let graphProxy: Server;
  let hookProxy: Server;
  let receiver: Server;
  /** Copies the network accepted, by callback data's send part: [callback data, wamid][]. */
  const copies = new Map<string, [string, string][]>();
  /** The last status the network reported per wamid (highest rank). */
  const networkStatus = new Map<string, string>();
  /** message.sent events: messageId → sessionId. */
  const sentSessions = new Map<string, string>();
  let nodeEnv: (i: number, port: number) => Record<string, string>;
  /** Called when the network accepted a send, before its answer heads back to the node. */
  let onNetworkAccepted: ((to: string, callbackData: string) => void) | undefined;
  /** Callback data of an attempt whose answer the network holds back and whose status webhooks are lost. */
  let lostAttempt: string | undefined;

  const start = (i: number, port: number): Node => {
    const l = launch(nodeEnv(i, port));
    return { id: `node${i}`, port, url: `http://127.0.0.1:${port}`, proc: l.proc, output: l.output, exited: l.exited, down: false };
  };
  const ready = async (n: Node) => {
    const deadline = Date.now() + 90_000;
    while ((await call(n.url, 'GET', '/readyz').catch(() => ({ status: 0 }))).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${n.id} never became ready:\n${n.output()}`);
      await sleep(200);
    }
  };

  beforeAll(async () => {
    [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
    const ports = [await freePort(), await freePort(), await freePort()];
    const host = `http://127.0.0.1:${ports[2]}`;
    graphProxy = await delayProxy(() => host, 75, (path, body, status, answer) => {
      if (!/\/messages$/.test(path) || status !== 200) return;
      const sent = JSON.parse(body.toString()) as { biz_opaque_callback_data?: string; to?: string };
      if (sent.to !== undefined && sent.biz_opaque_callback_data !== undefined) onNetworkAccepted?.(sent.to, sent.biz_opaque_callback_data);
      const wamid = (JSON.parse(answer.toString()) as { messages?: { id: string }[] }).messages?.[0]?.id;
      const cb = sent.biz_opaque_callback_data;
      if (cb === undefined || wamid === undefined) return;
      const send = cb.slice(0, cb.lastIndexOf('.'));
      copies.set(send, [...(copies.get(send) ?? []), [cb, wamid]]);
    }, (path, body) => {
      // Longer than the nodes' GRAPH_API_TIMEOUT_MS (15 s by default): the sender never learns the outcome.
      if (lostAttempt !== undefined && /\/messages$/.test(path) && body.toString().includes(`"${lostAttempt}"`)) return { holdAnswerMs: 20_000 };
      return undefined;
    });
    hookProxy = await delayProxy(() => host, 75, (_path, body, status) => {
      if (status !== 200 || body.length === 0) return;
      let parsed: any;
      try {
        parsed = JSON.parse(body.toString());
      } catch {
        return;
      }
      for (const entry of parsed.entry ?? []) {
        for (const change of entry.changes ?? []) {
          for (const s of change.value?.statuses ?? []) {
            const prev = networkStatus.get(s.id);
            if (prev === undefined || (STATUS_RANK[s.status] ?? 0) > (STATUS_RANK[prev] ?? 0)) networkStatus.set(s.id, s.status);
          }
        }
      }
    }, (_path, body) => (lostAttempt !== undefined && body.toString().includes(`"${lostAttempt}"`) ? { lose: true } : undefined));
    nodeEnv = (i, port) => ({
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ID: `node${i}`,
      ...clusterEnv({ redis, nats, postgres }, 'sb'),
      OPERATOR_TOKEN: OPERATOR,
      SECRETS_KEY: 'c'.repeat(64),
      SANDBOX_NETWORK: 'true',
      SANDBOX_GRAPH_URL: `http://127.0.0.1:${(graphProxy.address() as AddressInfo).port}/sandbox/graph/v27.0`,
      SANDBOX_WEBHOOK_BASE_URL: `http://127.0.0.1:${(hookProxy.address() as AddressInfo).port}`,
      SANDBOX_MAX_MPS: '100000',
      TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
      // How long a successor waits for the network's report of a send in flight before it sends
      // again: longer than the default 10 s, because on a loaded 2-core machine the statuses of a
      // copy (network, proxy, receiver, failover) can take longer, and a resend there is the
      // designed fallback, not what the crash and pause cases test.
      SEND_RECOVERY_WAIT_MS: '25000',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: 'warn',
    });
    for (let i = 1; i <= 3; i++) nodes.push(start(i, ports[i - 1]!));
    await Promise.all(nodes.map(ready));
    receiver = createServer((req, res) => {
      void readBody(req).then((b) => {
        const url = new URL(req.url!, 'http://x');
        if (req.method === 'GET') return res.end(url.searchParams.get('challenge') ?? '');
        const e = JSON.parse(b.toString());
        if (e.type === 'message.sent') sentSessions.set(e.data?.messageId ?? e.messageId, e.data?.sessionId ?? e.sessionId);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  }, 180_000);

  afterAll(async () => {
    for (const n of nodes) {
      n.proc.kill('SIGCONT');
      n.proc.kill('SIGKILL');
    }
    for (const s of [graphProxy, hookProxy, receiver]) {
      s?.closeAllConnections();
      s?.close();
    }
    await Promise.all([redis?.stop(), nats?.stop(), postgres?.stop()]);
  });

  async function setUp(name: string) {
    const [n1, n2, n3] = nodes as [Node, Node, Node];
    const op = (n: Node, path: string, body?: unknown) => call(n.url, body === undefined ? 'GET' : 'POST', path, { key: OPERATOR, body });
    const org = (await op(n1, '/admin/v1/organizations', { name })).body;
    const user = (await op(n2, `/admin/v1/organizations/${org.id}/users`, { email: `${org.id}@c.io`, name: 'A', role: 'admin', password: 'a long password' })).body;
    const apiKey = (await op(n3, `/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['message:send', 'conversation:handover:request', 'webhook:create'] })).body;
    const key = apiKey.key as string;
    expect(apiKey.id).toBeTruthy();
    const channel = (await op(n1, `/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'Sandbox', network: 'sandbox' })).body;
    expect(channel.id, JSON.stringify(channel)).toBeTruthy();
    expect((await op(n2, `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: TOP_UP })).status).toBe(200);
    const hook = await call(n3.url, 'POST', '/api/v1/webhooks', { key, body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['message.sent'] } });
    expect(hook.status).toBe(201);
    const phones = Array.from({ length: CONTACTS }, (_, c) => `49151${String(Date.now() % 1_000_000).padStart(6, '0')}${String(c).padStart(3, '0')}`);
    const aeid = (phone: string) => `${phone}:${channel.phoneNumberId}`;
    // The service names a send by the API key and the caller's key (`send:<key id>:<Idempotency-Key>`).
    const sendOf = (phone: string, idem: string) => {
      const cb = callbackData(org.id, aeid(phone), `send:${apiKey.id}:${idem}`, 1);
      return cb.slice(0, cb.lastIndexOf('.'));
    };
    // And charges it under `res_<hash of that>` (each resend's or late copy's charge: that, then `.copyN` / `.lateN`).
    const reservationOf = (idem: string) => 'res_' + createHash('sha256').update(`send:${apiKey.id}:${idem}`).digest('base64url').slice(0, 32);
    return { orgId: org.id as string, key, channel, phones, aeid, sendOf, reservationOf };
  }

  /** The node owning a contact's partition, read from its lease. */
  async function ownerOf(orgId: string, aeid: string): Promise<string> {
    const p = partitionOf({ type: 'conversation', key: `${orgId}/${aeid}` }, 64);
    return (await redisCli(redis.port, 'GET', `sb:{p${p}}:lease`)).split('|')[0] ?? '';
  }

  /**
   * Every contact's sends in order, each with its own key, over the live
   * nodes; retried with the same key until acknowledged. `onAck` sees the
   * running total (to strike mid-burst).
   */
  async function burst(setup: Awaited<ReturnType<typeof setUp>>, onAck: (total: number) => void) {
    const acked = new Map<string, { key: string; messageId: string }[]>();
    const unacked: string[] = [];
    const keys: [string, string][] = [];
    let total = 0;
    let rr = 0;
    await Promise.all(
      setup.phones.map(async (phone) => {
        const mine: { key: string; messageId: string }[] = [];
        acked.set(phone, mine);
        for (let i = 0; i < SENDS_PER_CONTACT; i++) {
          const idem = randomUUID();
          keys.push([phone, idem]);
          const deadline = Date.now() + 90_000;
          for (;;) {
            const live = nodes.filter((n) => !n.down);
            const n = live[rr++ % live.length]!;
            const r = await call(n.url, 'POST', '/v2/wa/template', {
              key: setup.key,
              headers: { 'idempotency-key': idem },
              body: { channelId: setup.channel.id, to: phone, template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } } },
            }).catch(() => ({ status: 599, body: undefined }));
            if (r.status === 201) {
              mine.push({ key: idem, messageId: r.body.messageId });
              onAck(++total);
              break;
            }
            if ((r.status !== 503 && r.status !== 599 && r.status !== 502) || Date.now() > deadline) {
              unacked.push(`${phone} #${i}: ${r.status} ${JSON.stringify(r.body)}`);
              break;
            }
            await sleep(200);
          }
        }
      }),
    );
    return { acked, unacked, total, keys };
  }

  async function verify(setup: Awaited<ReturnType<typeof setUp>>, result: Awaited<ReturnType<typeof burst>>) {
    const { key, sendOf } = setup;
    // Duplicates at the network: more than one accepted copy of one send (acknowledged or not).
    const duplicates = [...result.keys].map(([phone, idem]) => sendOf(phone, idem)).filter((s) => (copies.get(s)?.length ?? 0) > 1).map((s) => `${s}: ${JSON.stringify(copies.get(s))}`);
    // The acknowledged id is the copy the network has.
    const notTheNetworks: string[] = [];
    for (const [phone, list] of result.acked) for (const a of list) {
      const c = copies.get(sendOf(phone, a.key)) ?? [];
      if (!c.some(([, wamid]) => wamid === a.messageId)) notTheNetworks.push(`${a.messageId} (network has ${JSON.stringify(c)})`);
    }
    // History: every acknowledged id stored, in order per contact, with the network's final status.
    const deadline = Date.now() + 45_000;
    let problems: string[] = [];
    for (;;) {
      problems = [];
      for (const [phone, list] of result.acked) {
        const sessions = new Set(list.map((a) => sentSessions.get(a.messageId)).filter((s): s is string => s !== undefined));
        const history: { messageId: string; status?: string }[] = [];
        for (const sid of sessions) {
          const r = await call(nodes.find((n) => !n.down)!.url, 'GET', `/v1/sessions/${sid}/messages`, { key });
          if (r.status === 200) history.push(...r.body);
        }
        const byId = new Map(history.map((m) => [m.messageId, m]));
        for (const a of list) {
          const m = byId.get(a.messageId);
          if (m === undefined) problems.push(`${phone}: acknowledged ${a.messageId} not in history`);
          else if (networkStatus.get(a.messageId) === undefined || m.status !== networkStatus.get(a.messageId)) {
            problems.push(`${phone}: ${a.messageId} is ${m.status} in history, ${networkStatus.get(a.messageId)} at the network`);
          }
        }
        const order = history.map((m) => m.messageId).filter((id) => list.some((a) => a.messageId === id));
        if (order.length === list.length && order.join() !== list.map((a) => a.messageId).join()) problems.push(`${phone}: history order ${order.join()} differs from ack order`);
      }
      if (problems.length === 0 || Date.now() > deadline) break;
      await sleep(1000);
    }
    // Credits: the balance paid for exactly the copies the network accepted, at the template's price.
    const accepted = [...result.keys].reduce((n, [phone, idem]) => n + (copies.get(sendOf(phone, idem))?.length ?? 0), 0);
    const credits = (await call(nodes.find((n) => !n.down)!.url, 'GET', `/admin/v1/organizations/${setup.orgId}/credits`, { key: OPERATOR })).body as { balance: number; prices: Record<string, number> };
    const charged = { spent: TOP_UP - credits.balance, forCopies: accepted * credits.prices.UTILITY!, price: credits.prices.UTILITY! };
    // Where they differ: each send whose charges held in the ledger are not its copies at the network, with its ledger entries.
    const ledgerDiff: string[] = [];
    if (charged.spent !== charged.forCopies) {
      const held = new Map<string, number>();
      const entries = new Map<string, string[]>();
      const raw = (await redisCli(redis.port, 'LRANGE', `sb:{o:${setup.orgId}}:credit-ledger`, '0', '-1')).split('\n').filter((l) => l.startsWith('{'));
      for (const line of raw.reverse()) {
        const e = JSON.parse(line) as { ms: number; kind: string; amount: number; reference?: string | null };
        if (e.reference == null) continue;
        held.set(e.reference, (held.get(e.reference) ?? 0) - e.amount);
        entries.set(e.reference, [...(entries.get(e.reference) ?? []), `${new Date(e.ms).toISOString()} ${e.kind} ${e.amount}`]);
      }
      for (const [phone, idem] of result.keys) {
        const res = setup.reservationOf(idem);
        const refs = [...held.keys()].filter((r) => r === res || r.startsWith(`${res}.`));
        const c = copies.get(sendOf(phone, idem)) ?? [];
        if (refs.reduce((n, r) => n + held.get(r)!, 0) === c.length * charged.price) continue;
        ledgerDiff.push(`${phone} ${idem}: copies at the network ${JSON.stringify(c)}`, ...refs.map((r) => `  ${r}: ${entries.get(r)!.join(' | ')}`));
      }
    }
    return { duplicates, notTheNetworks, problems, charged, ledgerDiff };
  }

  /** node1, and the contacts whose partitions it owns (about a third). */
  async function pickVictim(setup: Awaited<ReturnType<typeof setUp>>): Promise<{ victim: Node; owned: Set<string> }> {
    const victim = nodes[0]!;
    const owners = await Promise.all(setup.phones.map((p) => ownerOf(setup.orgId, setup.aeid(p))));
    const owned = new Set(setup.phones.filter((_, i) => owners[i] === victim.id));
    expect(owned.size, `owners: ${owners.join()}`).toBeGreaterThan(0);
    return { victim, owned };
  }

  /** What both faults must leave: every send acknowledged once, as the network's only copy, recorded in order with its final status, and paid per copy. */
  async function expectEachSentOnce(setup: Parameters<typeof verify>[0], result: Awaited<ReturnType<typeof burst>>, struck: string | undefined) {
    expect(struck).toBeDefined();
    expect(result.unacked).toEqual([]);
    expect(result.total).toBe(CONTACTS * SENDS_PER_CONTACT);
    const v = await verify(setup, result);
    expect(v.duplicates).toEqual([]);
    expect(v.notTheNetworks).toEqual([]);
    expect(v.problems).toEqual([]);
    // Every copy that reached the network is paid for, and nothing else.
    expect(v.charged.spent, `the ledger against the network:\n${v.ledgerDiff.join('\n')}`).toBe(v.charged.forCopies);
    // The send caught at the network is acknowledged as the copy the network has, and only one went.
    const caught = copies.get(struck!.slice(0, struck!.lastIndexOf('.')))!;
    expect(caught).toHaveLength(1);
    expect([...result.acked.values()].flat().map((a) => a.messageId)).toContain(caught[0]![1]);
  }

  it('SIGKILL of a partition owner mid-burst (then restarted): nothing duplicated at the network, lost, misrecorded or reordered', async () => {
    const setup = await setUp('Send Once Kill');
    // One send per contact first, so the partitions are owned and known.
    const { victim, owned } = await pickVictim(setup);
    let acks = 0;
    let struck: string | undefined;
    let restarted: Promise<void> | undefined;
    // Killed once a third is acknowledged, the moment the network accepted a send of one of its
    // contacts: that send reached the network and its owner never hears back.
    onNetworkAccepted = (to, cb) => {
      if (struck !== undefined || acks < (CONTACTS * SENDS_PER_CONTACT) / 3 || !owned.has(to)) return;
      struck = cb;
      victim.down = true;
      victim.proc.kill('SIGKILL');
      restarted = (async () => {
        await victim.exited;
        await sleep(2000);
        const again = start(1, victim.port);
        Object.assign(victim, { proc: again.proc, output: again.output, exited: again.exited });
        await ready(victim);
        victim.down = false;
      })();
    };
    const result = await burst(setup, (total) => (acks = total));
    onNetworkAccepted = undefined;
    await restarted;
    await expectEachSentOnce(setup, result, struck);
  }, 240_000);

  it('SIGSTOP of a partition owner past its lease, then SIGCONT: nothing duplicated at the network, lost, misrecorded or reordered', async () => {
    const setup = await setUp('Send Once Pause');
    const { victim, owned } = await pickVictim(setup);
    let acks = 0;
    let struck: string | undefined;
    let resumed: Promise<void> | undefined;
    // Paused the moment the network accepted a send of one of its contacts: it resumes, past its
    // lease, with that answer in hand.
    onNetworkAccepted = (to, cb) => {
      if (struck !== undefined || acks < (CONTACTS * SENDS_PER_CONTACT) / 3 || !owned.has(to)) return;
      struck = cb;
      victim.down = true;
      victim.proc.kill('SIGSTOP');
      resumed = (async () => {
        // Past the lease (5 s by default) and a survivor's takeover.
        await sleep(8000);
        victim.proc.kill('SIGCONT');
        await ready(victim);
        victim.down = false;
      })();
    };
    const result = await burst(setup, (total) => (acks = total));
    onNetworkAccepted = undefined;
    await resumed;
    await expectEachSentOnce(setup, result, struck);
  }, 240_000);

  it('sends again, once, a send whose answer and every status were lost, after the wait: counted, logged, charged for both copies', async () => {
    const setup = await setUp('Send Once Resend');
    const phone = setup.phones[0]!;
    const idem = randomUUID();
    const send = setup.sendOf(phone, idem);
    lostAttempt = `${send}.1`;
    const resendsSoFar = async () => {
      let n = 0;
      for (const node of nodes) {
        const text = await (await fetch(`${node.url}/metrics`)).text();
        n += Number(/^switchboard_send_resends_total (\d+)/m.exec(text)?.[1] ?? 0);
      }
      return n;
    };
    const resendsBefore = await resendsSoFar();
    let acked: string | undefined;
    const deadline = Date.now() + 90_000;
    for (let i = 0; acked === undefined && Date.now() < deadline; i++) {
      const r = await call(nodes[i % 3]!.url, 'POST', '/v2/wa/template', {
        key: setup.key,
        headers: { 'idempotency-key': idem },
        body: { channelId: setup.channel.id, to: phone, template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } } },
      }).catch(() => ({ status: 599, body: undefined }));
      if (r.status === 201) acked = r.body.messageId as string;
      else if (r.status !== 503 && r.status !== 599) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      else await sleep(200);
    }
    lostAttempt = undefined;
    // Two copies at the network (the first's outcome was never known): the one case the network's lack of idempotency forces.
    const both = copies.get(send)!;
    expect(both.map(([cb]) => cb)).toEqual([`${send}.1`, `${send}.2`]);
    expect(acked).toBe(both[1]![1]);
    expect(nodes.some((n) => n.output().includes('keyed send sent again'))).toBe(true);
    expect((await resendsSoFar()) - resendsBefore).toBe(1);
    // Each copy that reached the network is paid for; the acknowledged one is recorded with its final status.
    const v = await verify(setup, { acked: new Map([[phone, [{ key: idem, messageId: acked! }]]]), unacked: [], total: 1, keys: [[phone, idem]] });
    expect(v.problems).toEqual([]);
    expect(v.charged.spent, `the ledger against the network:\n${v.ledgerDiff.join('\n')}`).toBe(v.charged.forCopies);
  }, 120_000);
});
