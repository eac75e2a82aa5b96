/**
 * The console's visit row shows what the operator recorded at the end of a visit (Chromium via playwright-core):
 * when it was completed with its quality review, and the last deliverables transmission, when it was sent and
 * the notes the client received (as text in lines, never as markup, a bidi override made visible), or that it
 * had none. Each step waits for the requests its click causes. Skipped when /usr/bin/chromium is missing
 * outside CI.
 */
import { describe, expect, it } from 'vitest';
import {
  browserRunnable,
  consoleWithHarness,
  signInToConsole,
  WAIT,
  workflowThenReload,
} from '../helpers/console-browser.js';
import { admin } from '../helpers/tenants.js';
import { visitInStatus, workflowAction } from '../helpers/visits.js';

/** Markup, a bidi override and two lines (one ended CRLF): all of it is text in the row. */
const NOTES = 'Photos <img src=x onerror="document.title=\'owned\'"> <b>attached</b>\r\nKey: \u202E4321 returned';
const NOTES_SHOWN = 'Photos <img src=x onerror="document.title=\'owned\'"> <b>attached</b>\nKey: ⟨U+202E⟩4321 returned';

/** A time as the console writes it, in the browser's time zone (UTC here). */
const written = (iso: string) => iso.slice(0, 19).replace('T', ' ');

describe.skipIf(!browserRunnable)("the console's record of a visit's completion and deliverables", () => {
  const made = consoleWithHarness({ started: false });

  it('shows the review with the completion time and the last notes sent with theirs', {
    timeout: 120_000,
  }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const visit = await visitInStatus(t, v, 'Dispatched');
    const sent = await workflowAction(t, visit.id, { action: 'transmit-deliverables', notes: NOTES });
    expect(sent.status).toBe(200);
    const stored = async () => (await admin(t, 'GET', `/admin/v1/site-visits/${visit.id}`)).body.data.attributes;

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, timezoneId: 'UTC' });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await row.waitFor(WAIT);

    // Sent while Dispatched: the notes as text in their lines, when they were sent; not completed yet.
    const cell = row.locator('td.deliverables');
    const notes = cell.locator('[data-field="deliverables-notes"]');
    // innerText, not textContent: the text as laid out, which keeps the line break only where the page does.
    // biome-ignore lint/performance/useDomNodeTextContent: playwright's Locator, the rendered text is the point
    expect(await notes.innerText()).toBe(NOTES_SHOWN);
    expect(await cell.locator('img, b').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    expect(await cell.textContent()).toContain(`sent ${written(sent.body.data.attributes.deliverablesTransmittedAt)}`);
    expect(await row.locator('[data-field="completion"]').count()).toBe(0);

    // Completed with its review passed: the row says so, with the time the service recorded.
    await row.getByLabel('Quality review').selectOption('passed');
    const completed = await workflowThenReload(page, v.tenantId, visit.id, row.locator('[data-action="complete"]'));
    expect(completed.status()).toBe(200);
    const afterCompletion = await stored();
    await row
      .locator('[data-field="completion"]')
      .getByText(`completed ${written(afterCompletion.completedAt)}, quality review passed`, { exact: true })
      .waitFor(WAIT);

    // A transmission without notes is the last one now: its time, and no notes.
    const transmit = row.locator('[data-action="transmit-deliverables"]');
    expect((await workflowThenReload(page, v.tenantId, visit.id, transmit)).status()).toBe(200);
    const afterTransmission = await stored();
    expect(afterTransmission.deliverablesNotes).toBeNull();
    await notes.getByText('no notes', { exact: true }).waitFor(WAIT);
    expect(await cell.textContent()).toContain(`sent ${written(afterTransmission.deliverablesTransmittedAt)}`);
    await page.close();
  });
});
