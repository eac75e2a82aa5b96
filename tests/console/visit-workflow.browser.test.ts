/**
 * The console's complete and transmit-deliverables actions send what the operator chose (Chromium via
 * playwright-core): the quality review's outcome, passed or failed, and the notes as typed. A failed review is
 * the service's to refuse (SPEC: a visit is completed after its quality review passed), and the console shows
 * its problem; the test then reads over the operator API what the service kept (the notes of the last
 * transmission among it), and the notes from the deliverables.transmitted events a subscription receives. Each
 * step waits for the requests its click causes. Skipped when /usr/bin/chromium is missing outside CI.
 */
import { describe, expect, it } from 'vitest';
import {
  browserRunnable,
  consoleWithHarness,
  signInToConsole,
  WAIT,
  workflow,
  workflowThenReload,
} from '../helpers/console-browser.js';
import { admin } from '../helpers/tenants.js';
import { visitInStatus } from '../helpers/visits.js';

const NOTES = 'Reader replaced.\nPhotos of the façade attached ✓';

describe.skipIf(!browserRunnable)("the console's visit workflow", () => {
  const made = consoleWithHarness({ started: true });

  it('completes with the review chosen (a failed one refused and shown) and transmits the notes typed', {
    timeout: 120_000,
  }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const endpoint = harness.receiver.endpoint();
    const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
      token: v.fullToken,
      json: {
        targetUrl: endpoint.url,
        eventTypes: ['deliverables.transmitted'],
        secret: 'console workflow secret 0123456789',
      },
    });
    expect(subscribed.status).toBe(201);
    const visit = await visitInStatus(t, v, 'Dispatched');
    const stored = async () => (await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body.data;
    const dispatched = await stored();

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await row.waitFor(WAIT);

    // Nothing is sent before the review is stated: the service requires it.
    const complete = row.locator('[data-action="complete"]');
    expect(await complete.isDisabled()).toBe(true);

    // A failed review: the service refuses, the console says why, the visit stays Dispatched.
    await row.getByLabel('Quality review').selectOption('failed');
    const refused = await workflow(page, visit.id, complete);
    expect(refused.request().postDataJSON()).toEqual({ action: 'complete', qualityReviewPassed: false });
    expect(refused.status()).toBe(422);
    await row.getByRole('alert').getByText('qualityReviewPassed: must be true').waitFor(WAIT);
    expect(await stored()).toMatchObject({
      attributes: { status: 'Dispatched', completedAt: null },
      meta: { version: dispatched.meta.version },
    });

    // Passed: completed, and the row is drawn again from the service's answer.
    await row.getByLabel('Quality review').selectOption('passed');
    const completed = await workflowThenReload(page, v.tenantId, visit.id, complete);
    expect(completed.status()).toBe(200);
    await row.getByText('Completed', { exact: true }).waitFor(WAIT);
    const afterCompletion = await stored();
    expect(afterCompletion.attributes.status).toBe('Completed');
    expect(afterCompletion.attributes.completedAt).not.toBeNull();
    expect(afterCompletion.meta.version).toBe(dispatched.meta.version + 1);

    // The notes as typed (new line and all), within the schema's limit; then a transmission without notes.
    const notes = row.getByLabel('Deliverables notes');
    expect(await notes.getAttribute('maxlength')).toBe('10000');
    await notes.fill(NOTES);
    const transmit = row.locator('[data-action="transmit-deliverables"]');
    const transmitted = await workflowThenReload(page, v.tenantId, visit.id, transmit);
    expect(transmitted.status()).toBe(200);
    expect(transmitted.request().postDataJSON()).toEqual({ action: 'transmit-deliverables', notes: NOTES });
    await row.getByText(`v${afterCompletion.meta.version + 1}`, { exact: true }).waitFor(WAIT);
    expect(await notes.inputValue()).toBe('');
    expect((await stored()).attributes.deliverablesNotes).toBe(NOTES);
    await notes.fill('  \n ');
    const blank = await workflowThenReload(page, v.tenantId, visit.id, transmit);
    expect(blank.request().postDataJSON()).toEqual({ action: 'transmit-deliverables', notes: null });
    const afterTransmission = await stored();
    expect(afterTransmission.attributes.deliverablesTransmittedAt).not.toBeNull();
    expect(afterTransmission.attributes.deliverablesNotes).toBeNull();
    expect(afterTransmission.meta.version).toBe(afterCompletion.meta.version + 2);

    const events = (await endpoint.waitFor(2)).map((request) => JSON.parse(request.body.toString('utf8')));
    expect(events.map((event) => event.data.notes).sort()).toEqual([NOTES, null].sort());
    await page.close();
  });
});
