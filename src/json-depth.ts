/** Deepest nesting any JSON body may have: far beyond any real payload, far below what recursion on it can survive. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether the JSON text nests objects and arrays deeper than `max`, found by
 * one pass over the bytes (brackets inside strings do not count) without
 * recursion, so it is safe on any input and runs before anything recursive
 * (`JSON.stringify`, zod, the store) sees the value.
 */
export function jsonTooDeep(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
