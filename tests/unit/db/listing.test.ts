/** A listing's text as PostgreSQL writes it (src/db/listing.ts), read back. */
import { describe, expect, it } from 'vitest';
import { parseListing } from '../../../src/db/listing.js';

describe('parseListing', () => {
  it('reads id, version and seq of each row, in order', () => {
    expect(parseListing('site_b 3 7 site_a 1 12')).toEqual([
      { id: 'site_b', version: 3, seq: 7 },
      { id: 'site_a', version: 1, seq: 12 },
    ]);
  });

  it('reads an empty listing as no rows', () => {
    expect(parseListing('')).toEqual([]);
  });
});
