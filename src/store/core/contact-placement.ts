import type { Identified } from './port.js';

/*
 * How `ContactRepo.identify` places a person, the same on every adapter: the
 * adapters read the ids' rows (and take their locks); the decision is here.
 */

/** The canonical id when every id is linked already and they agree (nothing to write), else undefined. */
export function placedAlready(canonicals: readonly (string | undefined)[]): string | undefined {
  const first = canonicals[0];
  return first !== undefined && canonicals.every((c) => c === first) ? first : undefined;
}

/**
 * Places the ids (most preferred first) given their linked canonical ids
 * (`rows`, undefined where unlinked) and which unlinked ids are contacts of
 * their own (from before ids were linked). The person is the first one any
 * id names, else the first id; `link` are the ids to link to it, and ids
 * that name another person are `conflicting`.
 */
export function placement(ids: readonly string[], rows: readonly (string | undefined)[], isContact: (id: string) => boolean): Identified & { link: string[] } {
  const now = rows.map((c, i) => c ?? (isContact(ids[i]!) ? ids[i]! : undefined));
  const canonical = now.find((c) => c !== undefined) ?? ids[0]!;
  const conflicting: string[] = [];
  const link: string[] = [];
  ids.forEach((id, i) => {
    if (now[i] !== undefined && now[i] !== canonical) conflicting.push(id);
    else if (rows[i] === undefined) link.push(id);
  });
  return { canonical, conflicting, link };
}
