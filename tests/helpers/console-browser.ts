/**
 * The console's browser tests: Debian's Chromium driven by playwright-core, skipped when it is missing outside
 * CI, and the operator's sign-in.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Locator, type Page, type Response } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startTestApp, type TestApp } from './app.js';
import { type DeliveryHarness, startDeliveryHarness } from './webhooks.js';

const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser tests run here: CI has Chromium, so there they fail rather than skip without it. */
export const browserRunnable = existsSync(CHROMIUM) || process.env.CI !== undefined;

/** How long a test waits for what a page is to show (a loaded machine is slow, never this slow). */
export const WAIT = { timeout: 30_000 };

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  });
}

/** Opens the console, signs in with the operator token and waits for the tenants page. */
export async function signInToConsole(page: Page, t: Pick<TestApp, 'baseUrl' | 'adminToken'>): Promise<void> {
  await page.goto(`${t.baseUrl}/console`);
  await page.getByLabel('Operator token').fill(t.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Tenants' }).waitFor(WAIT);
}

/**
 * For a describe block: a delivery harness (its worker running, or left to the test's processAll) and Chromium,
 * made before its tests and closed after them. Read them through the answer once the tests run.
 */
export function consoleWithHarness({ started }: { started: boolean }): { harness: DeliveryHarness; browser: Browser } {
  const made = {} as { harness: DeliveryHarness; browser: Browser };
  beforeAll(async () => {
    made.harness = await startDeliveryHarness({}, { started });
    made.browser = await launchChromium();
  });
  afterAll(async () => {
    await made.browser?.close();
    await made.harness?.close();
  });
  return made;
}

/**
 * For a describe block: the app and Chromium, made before its tests and closed after them (no delivery worker:
 * a test that plays the API's answers, or that needs none). Read them through the answer once the tests run.
 */
export function consoleWithApp(): { t: TestApp; browser: Browser } {
  const made = {} as { t: TestApp; browser: Browser };
  beforeAll(async () => {
    made.t = await startTestApp();
    made.browser = await launchChromium();
  });
  afterAll(async () => {
    await made.browser?.close();
    await made.t?.close();
  });
  return made;
}

/** Clicks the button and answers the workflow request the click sent. */
export async function workflow(page: Page, visitId: string, button: Locator): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse(
      (each) => each.request().method() === 'POST' && each.url().endsWith(`/site-visits/${visitId}/workflow`),
      WAIT,
    ),
    button.click(),
  ]);
  return response;
}

/** workflow(), then the tenant's visits read again (an action that succeeded refreshes the list). */
export async function workflowThenReload(
  page: Page,
  tenantId: string,
  visitId: string,
  button: Locator,
): Promise<Response> {
  const reloaded = page.waitForResponse(
    (each) =>
      each.request().method() === 'GET' &&
      each.url().endsWith(`/admin/v1/tenants/${encodeURIComponent(tenantId)}/site-visits`),
    WAIT,
  );
  const response = await workflow(page, visitId, button);
  await reloaded;
  return response;
}
