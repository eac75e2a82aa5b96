/**
 * The two steps every PATCH takes (src/db/column-changes.ts), and the unique violation every create or
 * update that can collide turns into its resource's 409 (src/db/errors.ts).
 */
import { describe, expect, it } from 'vitest';
import { changedColumns, suppliedColumns } from '../../../src/db/column-changes.js';
import { refusingDuplicate } from '../../../src/db/errors.js';

interface Row {
  name: string;
  site_code: string;
  unique_id: string | null;
  data: object;
}
const COLUMNS = { name: 'name', siteCode: 'site_code', uniqueID: 'unique_id', data: 'data' } as const;
const row: Row = { name: 'Store', site_code: 'S-1', unique_id: 'u', data: { a: 1 } };

describe('a patch as columns', () => {
  it('takes the supplied members under their columns; null is a value, undefined is not supplied', () => {
    const patch = { name: 'Shop', siteCode: undefined, uniqueID: null };
    expect(suppliedColumns<typeof patch, Row>(COLUMNS, patch)).toEqual({ name: 'Shop', unique_id: null });
  });

  it('keeps only what differs from the stored row; an equal JSON value still differs (!==)', () => {
    expect(changedColumns(row, { name: 'Store', site_code: 'S-2', unique_id: 'u', data: { a: 1 } })).toEqual({
      site_code: 'S-2',
      data: { a: 1 },
    });
    expect(changedColumns(row, { name: 'Store' })).toEqual({});
  });
});

describe('a unique violation as the caller names it', () => {
  const violation = Object.assign(new Error('duplicate key value violates unique constraint "sites_code"'), {
    code: '23505',
    constraint: 'sites_code',
  });
  const duplicate = () => new Error('duplicate site');

  it('answers what the write returns', async () => {
    await expect(refusingDuplicate(async () => 7, duplicate)).resolves.toBe(7);
  });

  it('throws the named error for a violation (of the named constraint, when one is named)', async () => {
    await expect(refusingDuplicate(() => Promise.reject(violation), duplicate)).rejects.toThrow('duplicate site');
    await expect(refusingDuplicate(() => Promise.reject(violation), duplicate, 'sites_code')).rejects.toThrow(
      'duplicate site',
    );
  });

  it("passes any other error on: another constraint's violation, or not a violation at all", async () => {
    await expect(refusingDuplicate(() => Promise.reject(violation), duplicate, 'other')).rejects.toBe(violation);
    const other = Object.assign(new Error('boom'), { code: '22001' });
    await expect(refusingDuplicate(() => Promise.reject(other), duplicate)).rejects.toBe(other);
  });
});
