import { describe, expect, it } from 'vitest';
import { intern } from '../../lib/util/intern.js';

describe('intern', () => {
  it('returns the same text, call after call (its one shared table is emptied each time)', () => {
    const paths = ['/job/config', '/job/servers', '/job/config', '/other/a/b'];
    expect(paths.map((path) => intern(`${path.slice(0, 2)}${path.slice(2)}`))).toEqual(paths);
    // Array-index-like names are ordered first by Object.keys: still only the one asked for comes back.
    expect(intern('/x')).toBe('/x');
    expect(intern('7')).toBe('7');
    expect(intern('/y')).toBe('/y');
  });
});
