import type { Fence } from '../../domain/fence.js';
import { LuaScript as Script, type RedisClient } from '../redis/client.js';
import { CoalescedReads } from '../redis/coalesced-reads.js';
import { FencedWriteError, type ActorStateRef, type ActorStateStore, type LeaseHolder, type PartitionLeaseStore } from './port.js';

// KEYS[1] epoch, KEYS[2] state; ARGV[1] epoch, ARGV[2] value
const SAVE = new Script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1`);

// KEYS[1] lease, KEYS[2] epoch; ARGV[1] node, ARGV[2] ttl ms
const ACQUIRE = new Script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local e = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. e, 'PX', ARGV[2])
return e`);

// KEYS[1] lease; ARGV[1] "node|epoch", ARGV[2] ttl ms
const RENEW = new Script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

// KEYS[1] lease, KEYS[2] epoch; ARGV[1] "node|epoch"
const RELEASE = new Script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[2])
return 1`);

// KEYS[1] members zset; ARGV[1] node, ARGV[2] ttl ms. Scores are expiry
// times on the Redis clock, so nodes' clocks never matter.
const HEARTBEAT = new Script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)`);

const LEAVE = new Script(`return redis.call('ZREM', KEYS[1], ARGV[1])`);

// KEYS[1] lease, KEYS[2] epoch; ARGV[1] "node|". Frees the lease only if that node holds it, whatever the epoch.
const BREAK = new Script(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, string.len(ARGV[1])) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[2])
return 1`);

/**
 * Actor state and partition leases in Redis.
 *
 * Every key of a partition carries the hash tag `{p<n>}`: a contact's state,
 * its partition's lease and its epoch counter live in one hash slot, so the
 * fenced write is a single-slot Lua script that also works on Redis Cluster.
 * The partition count must therefore stay fixed for a deployment.
 *
 * State loads and fence reads asked for in the same tick go to Redis as one
 * command (`CoalescedReads`): each is still sent after it was asked for, so
 * a fence read answers the epoch as it is then, as a GET of its own would.
 */
export class RedisActorStore implements ActorStateStore, PartitionLeaseStore {
  private readonly reads: CoalescedReads;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {
    this.reads = new CoalescedReads(client);
  }

  private slot(partition: number): string {
    return `${this.prefix}:{p${partition}}`;
  }

  stateKey(ref: ActorStateRef): string {
    return `${this.slot(ref.partition)}:actor:${ref.type}:${ref.key}`;
  }

  private leaseKey(p: number): string {
    return `${this.slot(p)}:lease`;
  }

  private epochKey(p: number): string {
    return `${this.slot(p)}:epoch`;
  }

  private get membersKey(): string {
    return `${this.prefix}:actor-nodes`;
  }

  async load(ref: ActorStateRef): Promise<unknown> {
    const raw = await this.reads.get(this.stateKey(ref));
    return typeof raw === 'string' ? (JSON.parse(raw) as unknown) : undefined;
  }

  async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    if (fence.partition !== ref.partition) throw new FencedWriteError(fence);
    const ok = await SAVE.run(this.client, [this.epochKey(ref.partition), this.stateKey(ref)], [String(fence.epoch), JSON.stringify(value)]);
    if (Number(ok) !== 1) throw new FencedWriteError(fence);
  }

  async checkFence(ref: ActorStateRef, fence: Fence): Promise<void> {
    if (fence.partition !== ref.partition || (await this.reads.get(this.epochKey(ref.partition))) !== String(fence.epoch)) throw new FencedWriteError(fence);
  }

  async acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | null> {
    const e = Number(await ACQUIRE.run(this.client, [this.leaseKey(partition), this.epochKey(partition)], [nodeId, String(ttlMs)]));
    return e > 0 ? e : null;
  }

  async renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean> {
    return Number(await RENEW.run(this.client, [this.leaseKey(partition)], [`${nodeId}|${epoch}`, String(ttlMs)])) === 1;
  }

  async release(partition: number, nodeId: string, epoch: number): Promise<boolean> {
    return Number(await RELEASE.run(this.client, [this.leaseKey(partition), this.epochKey(partition)], [`${nodeId}|${epoch}`])) === 1;
  }

  async holder(partition: number): Promise<LeaseHolder | null> {
    const raw = await this.client.get(this.leaseKey(partition));
    if (typeof raw !== 'string') return null;
    const i = raw.lastIndexOf('|');
    return { nodeId: raw.slice(0, i), epoch: Number(raw.slice(i + 1)) };
  }

  async heartbeat(nodeId: string, ttlMs: number): Promise<string[]> {
    const members = await HEARTBEAT.run(this.client, [this.membersKey], [nodeId, String(ttlMs)]);
    return (members as string[]).map(String).sort();
  }

  async leave(nodeId: string): Promise<void> {
    await LEAVE.run(this.client, [this.membersKey], [nodeId]);
  }

  /** One script per partition (each is its own hash slot), after the membership: no new lease goes to the node meanwhile. */
  async evict(nodeId: string, partitions: readonly number[]): Promise<number[]> {
    await LEAVE.run(this.client, [this.membersKey], [nodeId]);
    const freed = await Promise.all(partitions.map(async (p) => Number(await BREAK.run(this.client, [this.leaseKey(p), this.epochKey(p)], [`${nodeId}|`])) === 1));
    return partitions.filter((_, i) => freed[i]);
  }
}
