import { describe, expect, it } from 'vitest';
import { describeItems } from '../../lib/util/item-list.js';

describe('describeItems', () => {
  it('lists items ascending, consecutive runs as ranges', () => {
    expect(describeItems([])).toBe('');
    expect(describeItems([3, 1, 0, 2])).toBe('0-3');
    expect(describeItems([9, 0, 5, 7, 8, 1])).toBe('0-1,5,7-9');
  });

  it('cuts a long list short with the count', () => {
    const evens = Array.from({ length: 10_000 }, (_, i) => i * 2);
    expect(describeItems(evens)).toBe('0,2,4,6,8,10,12,14,16,18,20,22,... (10000 items)');
    expect(describeItems(Array.from({ length: 10_000 }, (_, i) => i))).toBe('0-9999');
  });
});
