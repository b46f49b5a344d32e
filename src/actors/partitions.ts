import type { ActorAddress } from './types.js';

/**
 * 32-bit FNV-1a over the UTF-16 code units of `s` (low byte, then high
 * byte). Stable across nodes and versions; no allocation on the hot path.
 */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h ^= c & 0xff;
    h = Math.imul(h, 0x01000193);
    h ^= c >>> 8;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Avalanche finaliser (murmur3 fmix32): FNV alone spreads similar strings poorly. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The partition an actor lives in. Depends only on the address and the
 * partition count, so every node agrees; the count must stay fixed for a
 * deployment's lifetime (state keys are tagged with it).
 */
export function partitionOf(address: ActorAddress, partitions: number): number {
  return fmix32(fnv1a32(`${address.type}/${address.key}`)) % partitions;
}

/**
 * Rendezvous (highest-random-weight) placement: the desired owner of each
 * partition among `nodes`. Every node computes the same answer from the same
 * membership, and when a node joins or leaves only the partitions it gains or
 * loses move.
 */
export function desiredOwners(nodes: readonly string[], partitions: number): (string | undefined)[] {
  const owners: (string | undefined)[] = [];
  for (let p = 0; p < partitions; p++) {
    let best: string | undefined;
    let bestScore = -1;
    for (const n of nodes) {
      const score = fmix32(fnv1a32(`${n}#${p}`));
      if (score > bestScore || (score === bestScore && best !== undefined && n < best)) {
        best = n;
        bestScore = score;
      }
    }
    owners.push(best);
  }
  return owners;
}
