/**
 * The operator console end to end in a real browser (Debian's Chromium driven by playwright-core): sign
 * in, create a tenant, move a visit through its workflow, watch its deliveries arrive at a test receiver,
 * make one fail and retry it (one, then all failed matching a filter after a dry-run count). Screenshots
 * go to tests/artifacts/console-*.png. Skipped when /usr/bin/chromium is missing outside CI.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { browserRunnable, launchChromium, WAIT } from '../helpers/console-browser.js';
import { fileForm, MULTIPART_CONTENT_TYPE, pdfBytes } from '../helpers/multipart.js';
import { admin, tokenFor } from '../helpers/tenants.js';
import { createItem, createProject, createSiteWithAssets, createVisit, type VisitTenant } from '../helpers/visits.js';
import { type DeliveryHarness, type ReceivedRequest, startDeliveryHarness } from '../helpers/webhooks.js';

const ARTIFACTS = path.resolve('tests/artifacts');

let harness: DeliveryHarness;
let t: TestApp;
let browser: Browser;

describe.skipIf(!browserRunnable)('the operator console', () => {
  beforeAll(async () => {
    harness = await startDeliveryHarness();
    t = harness.t;
    browser = await launchChromium([
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it('signs in, creates a tenant, walks a visit through its workflow, and retries failed deliveries', {
    timeout: 180_000,
  }, async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: path.join(ARTIFACTS, `console-${name}.png`), fullPage: true });
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const problems: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(t.baseUrl) && !request.url().startsWith('data:')) outside.push(request.url());
    });

    // Sign in: a wrong token is refused, the right one opens the console.
    const response = await page.goto(`${t.baseUrl}/console`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByLabel('Operator token').fill('not-the-operator-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That is not the operator token.').waitFor(WAIT);
    await page.getByLabel('Operator token').fill(t.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tenants' }).waitFor(WAIT);

    // Create a tenant; its secret is shown once.
    const name = `Console Co ${Date.now()}`;
    await page.getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByTestId('secret-once').waitFor(WAIT);
    await shot(page, '1-tenant-created');
    const clientId = (await page.getByTestId('client-id').textContent())!;
    const clientSecret = (await page.getByTestId('client-secret').textContent())!;
    await page.getByRole('link', { name }).first().click();
    await page.getByRole('heading', { name }).waitFor(WAIT);
    const tenantId = decodeURIComponent(page.url().split('#/tenants/')[1]!);

    // Its settings: the limit on active subscriptions (16 by default) changed and kept.
    const limit = page.getByLabel('maxActiveSubscriptions');
    expect(await limit.inputValue()).toBe('16');
    await limit.fill('20');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const stored = async () =>
      (await t.http.get(`/admin/v1/tenants/${tenantId}`, { token: t.adminToken })).body.data.maxActiveSubscriptions;
    await expect.poll(stored, { timeout: WAIT.timeout }).toBe(20);
    // The form is drawn again from the saved tenant.
    await expect
      .poll(() => page.getByLabel('maxActiveSubscriptions').inputValue(), { timeout: WAIT.timeout })
      .toBe('20');
    // The storage limit (10 GiB by default, in MiB) the same way.
    const storage = page.getByLabel('storageLimitMiB');
    expect(await storage.inputValue()).toBe('10240');
    // Beside it, what the tenant holds, in a unit that shows it (a new tenant: nothing, not "0.0 MiB").
    expect(await page.getByText('0 bytes used').count()).toBe(1);
    await storage.fill('20480');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const storedStorage = async () =>
      (await t.http.get(`/admin/v1/tenants/${tenantId}`, { token: t.adminToken })).body.data.storageLimitMiB;
    await expect.poll(storedStorage, { timeout: WAIT.timeout }).toBe(20480);

    // What the client and operator provide before a visit exists: a subscription to the test receiver
    // (job.dispatched fails until told otherwise), a site, a project, an item, and the visit itself.
    let failing = new Set(['job.dispatched']);
    const endpoint = harness.receiver.endpoint((request) => (failing.has(eventType(request)) ? 500 : 200));
    const fullToken = await tokenFor(t, { clientId, clientSecret });
    const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
      token: fullToken,
      json: {
        targetUrl: endpoint.url,
        eventTypes: [
          'ticket.created',
          'rep.assigned',
          'job.scheduled',
          'job.dispatched',
          'job.completed',
          'deliverables.transmitted',
        ],
        secret: 'console test secret 0123456789',
      },
    });
    expect(subscribed.status).toBe(201);
    const project = await createProject(t, tenantId);
    const item = await createItem(t, tenantId);
    const site = await createSiteWithAssets(t, tenantId, fullToken, 1);
    const v = {
      tenantId,
      clientId,
      clientSecret,
      scopes: [],
      token: fullToken,
      fullToken,
      ...site,
      projectId: project.projectId as number,
      itemName: item.itemName,
    } as VisitTenant;
    const visit = await createVisit(t, v, { clientTicketNumber: 'CONSOLE-1' });

    // The workflow, button by button.
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await page.getByRole('button', { name: 'Refresh' }).first().click();
    await row.waitFor(WAIT);
    await row.getByLabel('Field rep').fill('Jordan Lee');
    await row.locator('[data-action="assign-rep"]').click();
    await row.getByText('v2').waitFor(WAIT);
    await row.getByLabel('Scheduled date').fill('2026-12-02');
    await row.getByLabel('ETA').fill('09:30');
    await row.locator('[data-action="schedule"]').click();
    await row.getByText('Scheduled', { exact: true }).waitFor(WAIT);
    await row.locator('[data-action="dispatch"]').click();
    await row.getByText('Dispatched', { exact: true }).waitFor(WAIT);
    await row.getByLabel('Quality review').selectOption('passed');
    await row.locator('[data-action="complete"]').click();
    await row.getByText('Completed', { exact: true }).waitFor(WAIT);
    await row.locator('[data-action="transmit-deliverables"]').click();
    await row.getByText('v6').waitFor(WAIT);
    expect(await row.locator('[data-action="dispatch"]').isDisabled()).toBe(true);
    expect((await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body.data.attributes).toMatchObject({
      status: 'Completed',
      fieldRepName: 'Jordan Lee',
      scheduledDate: '2026-12-02',
      etaTime: '09:30',
    });

    // The return label the client uploaded, saved from the visit's row (it could not be had with the token).
    const label = pdfBytes(3000);
    label.write('console-label', 20, 'latin1');
    const uploaded = await t.http.post(`/api/v1/site-visits/${visit.id}/return-label`, {
      token: fullToken,
      body: fileForm(label, 'label-console.pdf'),
      headers: { 'content-type': MULTIPART_CONTENT_TYPE },
    });
    expect(uploaded.status, uploaded.text).toBe(201);
    await page.getByRole('button', { name: 'Refresh' }).first().click();
    const labelButton = row.getByRole('button', { name: 'Return label (v1)' });
    await labelButton.waitFor(WAIT);
    const [saved] = await Promise.all([page.waitForEvent('download', WAIT), labelButton.click()]);
    expect(saved.suggestedFilename()).toBe('label-console.pdf');
    expect(readFileSync((await saved.path())!).equals(label)).toBe(true);

    // The receiver gets every event; job.dispatched fails its three attempts.
    await until(
      () =>
        ['ticket.created', 'rep.assigned', 'job.scheduled', 'job.completed', 'deliverables.transmitted'].every(
          (type) => received(endpoint.requests, type) >= 1,
        ) && received(endpoint.requests, 'job.dispatched') >= 3,
    );
    await page.getByRole('button', { name: 'Refresh' }).nth(1).click();
    await page.locator(`tr[data-subscription]`).getByText('1 failed').waitFor(WAIT);
    await shot(page, '2-tenant-after-workflow');

    // Deliveries of the tenant: watch them, open the failed one's attempts, retry it.
    await page.getByRole('link', { name: "This tenant's deliveries" }).click();
    const failedRow = page.locator('tr[data-event-type="job.dispatched"][data-status="failed"]');
    await failedRow.waitFor(WAIT);
    expect(await page.locator('tr[data-delivery]').count()).toBe(6);
    await failedRow.getByRole('button', { name: 'Attempts' }).click();
    expect(await page.locator('tr.attempts tbody tr').allInnerTexts()).toHaveLength(3);
    await page.locator('tr.attempts').getByText('HTTP 500').first().waitFor(WAIT);
    await shot(page, '3-deliveries-failed');
    failing = new Set();
    await failedRow.locator('[data-action="retry"]').click();
    await page.locator('tr[data-event-type="job.dispatched"][data-status="succeeded"]').waitFor(WAIT);
    expect(received(endpoint.requests, 'job.dispatched')).toBe(4);

    // Another failure, retried with every failed delivery of the tenant after a dry-run count.
    failing = new Set(['deliverables.transmitted']);
    const transmitted = await admin(t, 'POST', `/admin/v1/site-visits/${visit.id}/workflow`, {
      action: 'transmit-deliverables',
      notes: 'Second batch.',
    });
    expect(transmitted.status).toBe(200);
    await page.locator('tr[data-event-type="deliverables.transmitted"][data-status="failed"]').waitFor(WAIT);
    await page.getByRole('button', { name: 'Count failed (dry run)' }).click();
    await page.getByTestId('dry-run-count').getByText('1 failed delivery matches.').waitFor(WAIT);
    await shot(page, '4-bulk-dry-run');
    failing = new Set();
    await page.getByRole('button', { name: 'Retry 1 failed' }).click();
    await page.getByText('1 reopened.').waitFor(WAIT);
    await until(async () => (await page.locator('tr[data-delivery][data-status="succeeded"]').count()) === 7);
    await shot(page, '5-deliveries-all-succeeded');

    // A ticket number with a bidi override is shown with the override made visible, not obeyed.
    const disguised = await createVisit(t, v, { clientTicketNumber: 'CONSOLE-\u202E21' });
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(tenantId)}`)}`);
    await page.getByRole('button', { name: 'Refresh' }).first().click();
    await page
      .locator(`tr[data-visit="${disguised.id}"]`)
      .getByText('CONSOLE-⟨U+202E⟩21', { exact: true })
      .waitFor(WAIT);

    // So is one in a last error (a sandbox listener's client reports its own), in both places it shows.
    const reported = 'listener: \u202Eevil';
    await t.database.db
      .updateTable('webhook_deliveries')
      .set({ last_error: reported })
      .where('tenant_id', '=', tenantId)
      .execute();
    await t.database.db
      .updateTable('webhook_subscriptions')
      .set({ last_error: reported })
      .where('tenant_id', '=', tenantId)
      .execute();
    await page.getByRole('button', { name: 'Refresh' }).nth(1).click();
    await page.locator('tr[data-subscription]').getByText('listener: ⟨U+202E⟩evil', { exact: true }).waitFor(WAIT);
    await page.getByRole('link', { name: "This tenant's deliveries" }).click();
    await page.locator('tr[data-delivery]').first().getByText('listener: ⟨U+202E⟩evil', { exact: true }).waitFor(WAIT);

    // The token lived in memory only: nothing stored (the inbox's state is the operator API's), and a reload
    // signs out.
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([0, 0, '']);
    await page.reload();
    await page.getByLabel('Operator token').waitFor(WAIT);
    expect(outside).toEqual([]);
    expect(problems.filter((problem) => !problem.includes('401 (Unauthorized)'))).toEqual([]);
  });
});

function eventType(request: ReceivedRequest): string {
  return String(request.headers['x-svc-event-type']);
}

function received(requests: ReceivedRequest[], type: string): number {
  return requests.filter((request) => eventType(request) === type).length;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
