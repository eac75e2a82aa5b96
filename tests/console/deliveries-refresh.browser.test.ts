/**
 * The console's deliveries page after a retry, when a list request was already under way (a Watch tick, a
 * filter applied): that request's answer predates the retry. The page dropped the retry's own reload while one
 * was in flight, so the stale answer stayed: the row showed "failed" after the retry, for ever with Watch off.
 * The list endpoint is played by the test (page.route) to hold one answer; sign-in and the rest are the service.
 */
import type { Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserRunnable, consoleWithApp, WAIT } from '../helpers/console-browser.js';

/** The list request made with the test's new filters. */
const isFiltered = (url: string) => url.includes('/deliveries?') && url.includes('eventType=job.dispatched');

describe.skipIf(!browserRunnable)('the console deliveries page', () => {
  const made = consoleWithApp();

  it('shows a retried delivery as pending though a list request under way answered "failed"', {
    timeout: 120_000,
  }, async () => {
    const { t, browser } = made;
    let status = 'failed';
    let hold: Promise<void> | undefined;
    const delivery = () => ({
      deliveryId: 'dlv_0000000000000000000000000a',
      eventId: 'evt_0000000000000000000000000a',
      eventType: 'job.dispatched',
      subscriptionId: 'whsub_00000000000000000000000a',
      targetKind: 'subscription',
      tenantId: 'tnt_0000000000000000000000000a',
      status,
      attempts: 3,
      attemptLog: [],
      nextAttemptAt: null,
      lastError: status === 'failed' ? 'HTTP 500' : null,
      createdAt: '2026-11-28T01:00:00.000Z',
      updatedAt: '2026-11-28T01:00:00.000Z',
      completedAt: null,
    });
    const page = await browser.newPage();
    await page.route('**/admin/v1/deliveries**', async (route: Route) => {
      const request = route.request();
      if (request.method() === 'POST') {
        status = 'pending';
        return route.fulfill({ status: 202, json: { data: delivery() } });
      }
      // The answer is made when the request arrives (as the service would). Only the new filters' request is
      // held: unchecking Watch loads the list too, and that request may reach here after the hold is set.
      const body = { data: [delivery()] };
      const waitFor = isFiltered(request.url()) ? hold : undefined;
      if (waitFor) hold = undefined;
      await waitFor;
      return route.fulfill({ status: 200, json: body });
    });

    await page.goto(`${t.baseUrl}/console#/deliveries`);
    await page.getByLabel('Operator token').fill(t.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = (state: string) => page.locator(`tr[data-delivery][data-status="${state}"]`);
    await row('failed').waitFor(WAIT);
    await page.getByLabel('Watch (every 2 s)').uncheck();

    // A list request under way (new filters) whose answer, "failed", is held until after the retry.
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const held = page.waitForRequest((request) => request.method() === 'GET' && isFiltered(request.url()));
    await page.getByLabel('Event type').selectOption('job.dispatched');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await held;
    const retried = page.waitForResponse((response) => response.request().method() === 'POST');
    await row('failed').locator('[data-action="retry"]').click();
    await retried;
    release();

    await row('pending').waitFor(WAIT);
    expect(await row('failed').count()).toBe(0);
  });
});
