/**
 * svc import's comparison of a row changed after its creation with its resource read back (resource-match.ts,
 * read-back.ts), and what the report says of either outcome (report.ts). Against the running service (the
 * forms it really serves) it is tests/client/import-rerun.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readBack } from '../../../packages/client/src/cli/import/read-back.js';
import { differingFields } from '../../../packages/client/src/cli/import/resource-match.js';
import { changedRow, describeRejection } from '../../../packages/client/src/cli/import/report.js';
import { Pacer } from '../../../packages/client/src/cli/import/pace.js';
import { ApiError, NetworkError } from '../../../packages/client/src/errors.js';

const siteRow = { name: 'Store 1', siteCode: 'S-1', addressLine1: '1 Main St', city: 'Springfield', country: 'US' };
/** A site as served: the row's fields, the ones it left out as null, and the service's own members. */
const servedSite = {
  clientId: 'client_1',
  status: 'Active',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
  ...siteRow,
  addressLine2: null,
  stateRegion: null,
  postalCode: null,
  uniqueID: null,
  uniqueID2: null,
  friendlyLocationName: null,
  friendlyLocationName2: null,
  keyRequired: null,
};

describe('differingFields', () => {
  it("a site: equal when every create field is the row's; the service's own members are not the row's", () => {
    expect(differingFields('sites', siteRow, servedSite)).toEqual([]);
    // Served without a member at all is served without a value.
    const { keyRequired: _, ...withoutKeyRequired } = servedSite;
    expect(differingFields('sites', siteRow, withoutKeyRequired)).toEqual([]);
  });

  it("names the differing fields in the create body's order; a field the row leaves out asks for no value", () => {
    const served = {
      ...servedSite,
      city: 'Shelbyville',
      name: 'Old name',
      addressLine2: 'Suite 5',
      keyRequired: false,
    };
    expect(differingFields('sites', siteRow, served)).toEqual(['name', 'addressLine2', 'city', 'keyRequired']);
    expect(differingFields('sites', { ...siteRow, keyRequired: false }, { ...servedSite, keyRequired: null })).toEqual([
      'keyRequired',
    ]);
    // A value of another type (a number where text is served) is no match: the import sends it as read.
    expect(differingFields('sites', { ...siteRow, postalCode: 62701 }, { ...servedSite, postalCode: '62701' })).toEqual(
      ['postalCode'],
    );
  });

  const visitRow = {
    clientSiteId: 'S-1',
    description: 'Fix it',
    clientTicketNumber: 'T-1',
    serviceType: 'Break / Fix',
    jobInstructions: 'Bring a reader',
    projectId: '1001',
    itemName: 'Kiosk',
    startDate: '2026-12-01T10:00:00+01:00',
    dueDate: '2026-12-03T17:00:00Z',
    arePartsRequired: true,
    siteAssetIds: [7, 5],
    schedulingRule: 'Date Range',
  };
  const asset = (siteAssetId: number) => ({
    siteVisitAssetId: siteAssetId * 10,
    siteAssetId,
    uniqueId: `A-${siteAssetId}`,
  });
  const servedVisit = {
    ...visitRow,
    status: 'New',
    projectId: 1001,
    startDate: '2026-12-01T09:00:00.000Z',
    dueDate: '2026-12-03T17:00:00.000Z',
    trackingNumber: null,
    partsReturnRequired: null,
    siteVisitAssets: [asset(5), asset(7)],
    assetsToService: 'A-5; A-7',
    returnLabel: null,
  };

  it('a visit: dates as instants, projectId as text, site assets as a set of ids', () => {
    expect(differingFields('site-visits', visitRow, servedVisit)).toEqual([]);
    const moved = {
      ...servedVisit,
      startDate: '2026-12-01T10:00:00.000Z',
      projectId: 1002,
      siteVisitAssets: [asset(5)],
    };
    expect(differingFields('site-visits', visitRow, moved)).toEqual(['projectId', 'startDate', 'siteAssetIds']);
    // No siteAssetIds in the row: a create assigns none.
    const { siteAssetIds: _, ...withoutAssets } = visitRow;
    expect(differingFields('site-visits', withoutAssets, servedVisit)).toEqual(['siteAssetIds']);
    expect(differingFields('site-visits', withoutAssets, { ...servedVisit, siteVisitAssets: [] })).toEqual([]);
    // A date the service could not have stored is compared as written.
    expect(differingFields('site-visits', { ...visitRow, dueDate: 'soon' }, servedVisit)).toEqual(['dueDate']);
  });

  it('a message: its short urgency word is the full value stored, its status Open when left out, its visit by id', () => {
    const row = { siteVisitId: 'visit_1', messageThread: 'Note', urgency: 'High' };
    const served = {
      siteVisitId: 'visit_1',
      messageThread: 'Note',
      urgency: 'High – Needs attention soon',
      status: 'Open',
      type: null,
      buyer: null,
      clientContacts: null,
      svcPm: true,
      recordOwner: 'Client API',
    };
    expect(differingFields('messages', row, served)).toEqual([]);
    expect(differingFields('messages', { ...row, urgency: 'Low' }, served)).toEqual(['urgency']);
    expect(differingFields('messages', row, { ...served, status: 'Closed', siteVisitId: 'visit_2' })).toEqual([
      'siteVisitId',
      'status',
    ]);
    // The ticket number a row may name its visit by is sent as that visit's id, which is what is compared.
    expect(differingFields('messages', { ...row, clientTicketNumber: 'T-1' }, served)).toEqual([]);
  });
});

describe('readBack', () => {
  const pacer = () => new Pacer(60_000, { now: () => 0, sleep: async () => undefined });
  const problem = (status: number, title: string) =>
    new ApiError(
      { type: `https://x/problems/${title}`, title, status, detail: `${title}.` },
      'GET',
      '/api/v1/sites/site_1',
    );
  const failing = (error: Error) => ({
    get: async () => {
      throw error;
    },
  });

  it('answers up to date, or the fields that differ', async () => {
    const reader = { get: async () => ({ id: 'site_1', attributes: { ...servedSite, city: 'Shelbyville' } }) };
    expect(await readBack('sites', reader, pacer(), 'site_1', { ...siteRow, city: 'Shelbyville' })).toEqual({
      kind: 'up-to-date',
    });
    expect(await readBack('sites', reader, pacer(), 'site_1', siteRow)).toEqual({ kind: 'differs', fields: ['city'] });
  });

  it('answers the refusals a row meets alone (404, 403, another 4xx); throws what stops the run (429, 5xx, network, 401)', async () => {
    expect(await readBack('sites', failing(problem(404, 'not-found')), pacer(), 'site_1', siteRow)).toEqual({
      kind: 'not-found',
      why: 'site_1 is not found any more (404 not-found)',
    });
    expect(await readBack('sites', failing(problem(403, 'insufficient-scope')), pacer(), 'site_1', siteRow)).toEqual({
      kind: 'not-read',
      why: 'these credentials may not read it (403 insufficient-scope)',
      refused: true,
    });
    expect(await readBack('sites', failing(problem(400, 'bad-request')), pacer(), 'site_1', siteRow)).toEqual({
      kind: 'not-read',
      why: 'reading it was refused (400 bad-request: bad-request.)',
    });
    for (const error of [
      problem(429, 'rate-limit-exceeded'),
      problem(503, 'unavailable'),
      problem(401, 'unauthorized'),
      new NetworkError('GET', '/api/v1/sites/site_1', { cause: new Error('ECONNREFUSED') }),
    ])
      await expect(readBack('sites', failing(error), pacer(), 'site_1', siteRow)).rejects.toBe(error);
  });
});

describe('the report', () => {
  const state = { kind: 'changed', id: 'site_1', matchedBy: 'siteCode' } as const;
  const row = { row: 2, line: 3, naturalKey: 'S-1' };

  it('names the fields to PATCH; a message of another visit is not one PATCH can move', () => {
    expect(changedRow('sites', row, state, { kind: 'differs', fields: ['name', 'city'] })).toEqual({
      row: 2,
      line: 3,
      id: 'site_1',
      matchedBy: 'siteCode',
      differs: ['name', 'city'],
      detail:
        'changed since it was created as site_1 (same siteCode): not sent, which would create a second site; ' +
        'site_1 differs from the row in name, city: change them with PATCH /api/v1/sites/site_1',
    });
    const message = { kind: 'changed', id: 'msg_1', matchedBy: 'position' } as const;
    expect(changedRow('messages', row, message, { kind: 'differs', fields: ['siteVisitId'] }).detail).toMatch(
      /msg_1 differs from the row in siteVisitId: msg_1 is a message of another visit: if this row is another message, import it from a file of its own$/,
    );
  });

  it('says why a resource was not compared, and never that the row comes back on every run', () => {
    const notRead = changedRow('sites', row, state, { kind: 'not-read', why: 'these credentials may not read it' });
    expect(notRead).toMatchObject({ notCompared: 'these credentials may not read it' });
    expect(notRead.detail).toMatch(
      /change site_1 with PATCH \/api\/v1\/sites\/site_1 \(not compared with the row: these credentials may not read it\)$/,
    );
    expect(changedRow('sites', row, { ...state, id: null, matchedBy: 'key' }).detail).not.toMatch(/every run/);
  });

  it('a row refused before any request says it was not sent', () => {
    const refused = { row: 1, line: 1, idempotencyKey: 'k', status: null, type: null, notSent: true as const };
    expect(describeRejection({ ...refused, title: 'Unreadable row', detail: 'the line is not JSON' })).toBe(
      'not sent (Unreadable row): the line is not JSON',
    );
  });
});
