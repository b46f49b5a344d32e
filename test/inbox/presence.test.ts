import { describe, expect, it } from 'vitest';
import { InProcessEphemeralBus, PresenceBoard, type EphemeralFrame } from '../../src/ws/ephemeral.js';

/** Three nodes' presence boards on one bus, as three clustered nodes on NATS. */
function cluster() {
  const bus = new InProcessEphemeralBus();
  let now = 1_000_000;
  const heard: Record<'a' | 'b' | 'c', EphemeralFrame[]> = { a: [], b: [], c: [] };
  const board = (name: 'a' | 'b' | 'c') => new PresenceBoard(bus, (_org, f) => heard[name].push(f), 1_000, () => now);
  return { boards: { a: board('a'), b: board('b'), c: board('c') }, heard, advance: (ms: number) => (now += ms) };
}

describe('presence across nodes', () => {
  it('keeps a user online while any node has a socket of theirs', () => {
    const { boards, heard } = cluster();
    boards.a.connected('o1', 'ann');
    boards.b.connected('o1', 'ann');
    expect(heard.c).toEqual([{ type: 'presence', userId: 'ann', status: 'online' }]);
    boards.b.disconnected('o1', 'ann');
    expect(boards.c.snapshot('o1')).toEqual([{ userId: 'ann', status: 'online' }]);
    expect(heard.c).toHaveLength(1);
    boards.a.disconnected('o1', 'ann');
    expect(boards.c.snapshot('o1')).toEqual([]);
    expect(heard.c.at(-1)).toEqual({ type: 'presence', userId: 'ann', status: 'offline' });
  });

  it('counts online above away, and stays within the organization', () => {
    const { boards, heard } = cluster();
    boards.a.connected('o1', 'ann');
    boards.b.connected('o1', 'ann');
    boards.a.set('o1', 'ann', 'away');
    expect(boards.c.snapshot('o1')).toEqual([{ userId: 'ann', status: 'online' }]);
    boards.b.set('o1', 'ann', 'away');
    expect(boards.c.snapshot('o1')).toEqual([{ userId: 'ann', status: 'away' }]);
    expect(heard.c.at(-1)).toEqual({ type: 'presence', userId: 'ann', status: 'away' });
    expect(boards.c.snapshot('o2')).toEqual([]);
  });

  it('forgets a node that stopped speaking after three missed refreshes, unless another node still has the user', () => {
    const { boards, heard, advance } = cluster();
    boards.a.connected('o1', 'ann');
    boards.b.connected('o1', 'bob');
    boards.c.connected('o1', 'bob');
    // Node b dies: it neither refreshes nor says offline. a and c keep refreshing.
    for (let i = 0; i < 4; i++) {
      advance(1_000);
      (boards.a as unknown as { tick(): void }).tick();
      (boards.c as unknown as { tick(): void }).tick();
    }
    expect(boards.a.snapshot('o1').map((p) => p.userId).sort()).toEqual(['ann', 'bob']);
    boards.c.disconnected('o1', 'bob');
    for (let i = 0; i < 4; i++) {
      advance(1_000);
      (boards.a as unknown as { tick(): void }).tick();
    }
    expect(boards.a.snapshot('o1')).toEqual([{ userId: 'ann', status: 'online' }]);
    expect(heard.a.filter((f) => f.type === 'presence' && f.userId === 'bob').map((f) => (f as { status: string }).status)).toEqual(['online', 'offline']);
  });
});
