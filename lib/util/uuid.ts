import { randomFillSync } from 'node:crypto';

/**
 * A random (version 4) UUID as one flat string of 36 characters: 56 bytes of heap.
 *
 * `crypto.randomUUID()` joins its 16 bytes' hex pairs and dashes with `+`, and V8 keeps such a result as a tree of
 * cons strings: 480 bytes a UUID for as long as it lives (measured on Node 20). An item start's execution id lives
 * from the item's start to the end of its record in the execution log, across the young generation's collections
 * of a burst: it was promoted into the old generation at 470 bytes an item start (docs/benchmarks.md, issue 43).
 * Randomness as `randomUUID()`'s: crypto's, taken 128 UUIDs at a time.
 */
export function flatRandomUUID(): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  let at = 0;
  for (let index = 0; index < 16; index++) {
    let byte = pool[next + index]!;
    if (index === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (index === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = DASH;
    text[at++] = HEX_DIGITS[byte >> 4]!;
    text[at++] = HEX_DIGITS[byte & 0x0f]!;
  }
  next += 16;
  return text.toString('latin1', 0, 36);
}

const pool = Buffer.alloc(16 * 128);
let next = pool.length;
/** Reused: the string is copied out of it. */
const text = Buffer.alloc(36);
const DASH = 0x2d;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
