/**
 * A subscription's last error in the console's tenant page (Chromium via playwright-core). The service keeps it
 * after the subscription succeeds again, and the page showed it alone, in red, beside a success rate of 100%:
 * an operator read a failure under way. Now it shows when it happened, red only while the subscription is
 * failing, greyed and said to be before the last success once it has succeeded since. Skipped when
 * /usr/bin/chromium is missing outside CI.
 */
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserRunnable, consoleWithHarness, signInToConsole, WAIT } from '../helpers/console-browser.js';

describe.skipIf(!browserRunnable)("the console's subscription health", () => {
  const made = consoleWithHarness({ started: false });

  it("shows the last error's time, red only while the subscription is failing", { timeout: 120_000 }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const subscribe = async () => {
      const created = await t.http.post('/api/v1/webhook-subscriptions', {
        token: v.fullToken,
        json: {
          targetUrl: harness.receiver.endpoint().url,
          eventTypes: ['job.completed'],
          secret: 'subscription health secret 0123456789',
        },
      });
      expect(created.status).toBe(201);
      return created.body.data.id as string;
    };
    const [failing, recovered] = [await subscribe(), await subscribe()];
    const health = (id: string, values: Record<string, unknown>) =>
      t.database.db.updateTable('webhook_subscriptions').set(values).where('id', '=', id).execute();
    await health(failing, {
      consecutive_failures: 2,
      failing_since: new Date('2026-11-27T09:59:00Z'),
      last_failure_at: new Date('2026-11-27T10:00:00Z'),
      last_success_at: new Date('2026-11-27T09:00:00Z'),
      last_error: 'HTTP 503',
    });
    await health(recovered, {
      consecutive_failures: 0,
      failing_since: null,
      last_failure_at: new Date('2026-11-26T09:00:00Z'),
      last_success_at: new Date('2026-11-27T10:00:00Z'),
      last_error: 'HTTP 500',
    });

    const page = await browser.newPage({ timezoneId: 'UTC' });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const lastError = (id: string) => page.locator(`tr[data-subscription="${id}"] td[data-last-error]`);
    await lastError(recovered).waitFor(WAIT);

    expect(await lastError(failing).getAttribute('data-last-error')).toBe('failing');
    expect(await shown(lastError(failing))).toEqual(['HTTP 503', '2026-11-27 10:00:00']);
    expect(await color(lastError(failing))).toBe('rgb(180, 35, 24)');

    expect(await lastError(recovered).getAttribute('data-last-error')).toBe('recovered');
    expect(await shown(lastError(recovered))).toEqual(['HTTP 500', '2026-11-26 09:00:00, before the last success']);
    expect(await color(lastError(recovered))).toBe('rgb(91, 101, 118)');
    await page.close();
  });
});

/** The cell's error, then the line under it. */
async function shown(cell: Locator): Promise<string[]> {
  return [await cell.locator('.chosen').textContent(), await cell.locator('.muted').textContent()].map(String);
}

/** The cell's text colour, as drawn (this project's tests have no DOM types: the page's global is named). */
function color(cell: Locator): Promise<string> {
  type Page = { getComputedStyle(element: unknown): { color: string } };
  return cell.evaluate((element) => (globalThis as unknown as Page).getComputedStyle(element).color);
}
