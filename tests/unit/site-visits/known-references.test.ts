/** site-visits/known-references.ts: what one tenant's creates found, only for that tenant, until forgotten. */
import { describe, expect, it } from 'vitest';
import { KnownReferences } from '../../../src/modules/site-visits/known-references.js';

const names = { projectId: '7', siteCode: 'S-1', itemName: 'Kiosk' };
const found = {
  project: { project_id: '7', project_id_is_integer: true },
  site: { id: 'site_1', site_code: 'S-1' },
  item: { item_id: '3', item_name: 'Kiosk' },
};

describe('KnownReferences', () => {
  it("gives a tenant's references back only to that tenant, and only all three together", () => {
    const known = new KnownReferences();
    known.remember('ten_a', names, found);
    expect(known.get('ten_a', names)).toEqual(found);
    expect(known.get('ten_b', names)).toBeUndefined();
    expect(known.get('ten_a', { ...names, siteCode: 'S-2' })).toBeUndefined();
  });

  it('reads afresh what was forgotten', () => {
    const known = new KnownReferences();
    known.remember('ten_a', names, found);
    known.forget('ten_a', names);
    expect(known.get('ten_a', names)).toBeUndefined();
  });
});
