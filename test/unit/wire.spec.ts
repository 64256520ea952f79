import { describe, expectTypeOf, it } from 'vitest';
import type { ItemCompletedEvent, Wire } from '../../lib/index.js';

/** Wire<T>: the library's own types as JSON carries them, for the console's page and services on a transport. */

describe('Wire', () => {
  it('makes Dates strings and undefined fields optional, through arrays and nested objects', () => {
    type Stored = { at: Date; next: Date | undefined; items: Array<{ when: Date }>; name: string };
    expectTypeOf<Wire<Stored>>().toEqualTypeOf<{
      at: string;
      items: Array<{ when: string }>;
      name: string;
      next?: string;
    }>();
    expectTypeOf<Wire<ItemCompletedEvent>['startTime']>().toEqualTypeOf<string>();
  });
});
