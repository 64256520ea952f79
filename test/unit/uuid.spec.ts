import { describe, expect, it } from 'vitest';
import { flatRandomUUID } from '../../lib/util/uuid.js';

describe('flatRandomUUID', () => {
  it('makes version 4 UUIDs of the RFC 4122 variant, all different, past its pool of 128', () => {
    const made = Array.from({ length: 1000 }, () => flatRandomUUID());
    for (const id of made) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(made).size).toBe(made.length);
  });
});
