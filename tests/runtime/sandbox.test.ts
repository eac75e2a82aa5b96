import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDatabase } from '../../src/db/database.js';
import { countTenants } from '../../src/modules/tenants/repository.js';
import {
  type CredentialPacket,
  provisionSandbox,
  writeAdminToken,
  writeCredentialPacket,
} from '../../src/runtime/sandbox.js';
import { openEmptyDatabase, startTestApp, testConfig, type TestApp } from '../helpers/app.js';

const ALL = ['sites:read', 'sites:write', 'site-visits:read', 'site-visits:write', 'webhooks:read', 'webhooks:write'];

let empty: Awaited<ReturnType<typeof openEmptyDatabase>>;
let database: AppDatabase;
let packet: CredentialPacket | undefined;
let t: TestApp;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-'));

beforeAll(async () => {
  empty = await openEmptyDatabase();
  database = empty.database;
});
afterAll(async () => {
  await t?.close();
  await empty?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('provisionSandbox', () => {
  it('production provisions nothing, even on an empty database', async () => {
    expect(await countTenants(database.db)).toBe(0);
    expect(await provisionSandbox(testConfig({ environment: 'production' }), database, new Date())).toBeUndefined();
    expect(await countTenants(database.db)).toBe(0);
  });

  it('an empty sandbox database gets the demo tenant, exactly once even when processes start together', async () => {
    const config = testConfig({ publicBaseUrl: 'https://sandbox.example.com' });
    const results = await Promise.all([
      provisionSandbox(config, database, new Date()),
      provisionSandbox(config, database, new Date()),
      provisionSandbox(config, database, new Date()),
    ]);
    const packets = results.filter((result) => result !== undefined);
    expect(packets).toHaveLength(1);
    packet = packets[0];
    expect(await countTenants(database.db)).toBe(1);
  });

  it('the packet carries every member of DECISIONS, and nothing else', () => {
    expect(packet).toEqual({
      baseUrl: 'https://sandbox.example.com',
      tenantId: expect.stringMatching(/^tnt_/),
      client_id: expect.stringMatching(/^cli_/),
      client_secret: expect.stringMatching(/^secret_/),
      scopes: ALL,
      projectId: 1001,
      itemName: 'Demo Kiosk',
      siteCode: 'DEMO-001',
      siteAssetIds: [expect.any(Number), expect.any(Number), expect.any(Number)],
    });
    expect(packet!.siteAssetIds.every(Number.isInteger)).toBe(true);
    expect(new Set(packet!.siteAssetIds).size).toBe(3);
  });

  it('a second start provisions nothing', async () => {
    expect(await provisionSandbox(testConfig(), database, new Date())).toBeUndefined();
    expect(await countTenants(database.db)).toBe(1);
  });

  it("the packet's credentials obtain a token and read the demo site, project, item and assets", async () => {
    t = await startTestApp({ database });
    const granted = await t.http.post('/api/v1/oauth/token', {
      json: { grant_type: 'client_credentials', client_id: packet!.client_id, client_secret: packet!.client_secret },
    });
    expect(granted.status).toBe(200);
    expect(granted.body.scope.split(' ')).toEqual(packet!.scopes);
    const token = granted.body.access_token;

    const sites = await t.http.get('/api/v1/sites', { token, query: { siteCode: packet!.siteCode } });
    expect(sites.body.data).toHaveLength(1);
    const site = sites.body.data[0];
    expect(site.attributes).toMatchObject({ clientId: packet!.tenantId, siteCode: 'DEMO-001', status: 'Active' });
    expect((await t.http.get(`/api/v1/sites/${site.id}`, { token })).status).toBe(200);

    const tenant = `/admin/v1/tenants/${packet!.tenantId}`;
    const projects = await t.http.get(`${tenant}/projects`, { token: t.adminToken });
    expect(projects.body.data).toEqual([expect.objectContaining({ projectId: packet!.projectId, status: 'Active' })]);
    const items = await t.http.get(`${tenant}/items`, { token: t.adminToken });
    expect(items.body.data).toEqual([expect.objectContaining({ itemName: packet!.itemName })]);
    const assets = await t.http.get(`${tenant}/site-assets`, {
      token: t.adminToken,
      query: { siteCode: packet!.siteCode },
    });
    expect(assets.body.data.map((asset: { siteAssetId: number }) => asset.siteAssetId)).toEqual(packet!.siteAssetIds);
  });
});

describe('files in DATA_DIR', () => {
  it('writeCredentialPacket writes the packet as JSON with mode 0600, creating the directory', () => {
    const dir = path.join(dataDir, 'nested', 'data');
    const file = writeCredentialPacket(dir, packet!);
    expect(file).toBe(path.join(dir, 'credentials.json'));
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(packet);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('an existing, looser file is tightened to 0600', () => {
    const file = path.join(dataDir, 'credentials.json');
    fs.writeFileSync(file, '{}', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    writeCredentialPacket(dataDir, packet!);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('writeAdminToken writes the token with mode 0600', () => {
    const file = writeAdminToken(dataDir, 'adm_example');
    expect(fs.readFileSync(file, 'utf8').trim()).toBe('adm_example');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
