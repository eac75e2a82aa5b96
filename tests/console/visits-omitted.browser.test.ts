/**
 * The console's list of a tenant's visits says when the operator API left older visits out (its answer stops
 * at 1 MiB: `meta.omitted`), and says nothing of the kind when none was (Chromium via playwright-core).
 * Skipped when /usr/bin/chromium is missing outside CI.
 */
import { describe, expect, it } from 'vitest';
import { browserRunnable, consoleWithApp, signInToConsole, WAIT } from '../helpers/console-browser.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, visitTenant } from '../helpers/visits.js';

/** Text that JSON writes as six bytes a character (\u0001): visits of some 72 KB each, 14 to 1 MiB. */
const LARGE = { description: '\u0001'.repeat(2_000), jobInstructions: '\u0001'.repeat(10_000) };

describe.skipIf(!browserRunnable)("the console's list of a tenant's visits", () => {
  const made = consoleWithApp();

  it('says how many older visits the answer left out, and nothing when it left none', {
    timeout: 120_000,
  }, async () => {
    const { t, browser } = made;
    const small = await visitTenant(t);
    const only = await createVisit(t, small, { clientTicketNumber: 'SMALL-1' });
    const large = await visitTenant(t);
    for (let i = 0; i < 17; i++) await createVisit(t, large, { ...LARGE, clientTicketNumber: `LARGE-${i}` });
    const answer = (await admin(t, 'GET', `/admin/v1/tenants/${large.tenantId}/site-visits`)).body;
    expect(answer.meta.omitted).toBeGreaterThan(0);

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(large.tenantId)}`)}`);
    await page.locator(`tr[data-visit="${answer.data[0].id}"]`).waitFor(WAIT);
    expect(await page.locator('tr[data-visit]').count()).toBe(answer.data.length);
    const notice = page.locator('[data-field="visits-omitted"]');
    expect(await notice.textContent()).toBe(
      `${answer.meta.omitted} older visits are not shown: the list stops at 1 MiB of visits.`,
    );

    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(small.tenantId)}`)}`);
    await page.locator(`tr[data-visit="${only.id}"]`).waitFor(WAIT);
    expect(await page.locator('tr[data-visit]').count()).toBe(1);
    expect(await page.locator('[data-field="visits-omitted"]').count()).toBe(0);
    await page.close();
  });
});
