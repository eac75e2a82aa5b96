/**
 * GET /docs in a real browser: Debian's Chromium, driven by playwright-core. CI installs the browser
 * (.ci/run) and runs this test; elsewhere it is skipped when /usr/bin/chromium is missing.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve('tests/artifacts');
const runnable = existsSync(CHROMIUM) || process.env.CI !== undefined;

let t: TestApp;
let browser: Browser;

describe.skipIf(!runnable)('the API reference page', () => {
  beforeAll(async () => {
    t = await startTestApp();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lists every operation and event of the document, using nothing but the service', {
    timeout: 90_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const requested: string[] = [];
    const problems: string[] = [];
    const answered: string[] = [];
    const blocked: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('response', (answer) => answered.push(answer.url()));
    page.on('requestfailed', (request) => blocked.push(`${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // No console error at all: a CSP violation (an outside address the page tried) would be one.
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console: ${message.text()}`);
    });

    const response = await page.goto(`${t.baseUrl}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // Redoc renders one section per operation, headed by its summary, and a menu entry for each.
    const headings = page.locator('h2');
    await headings.filter({ hasText: 'Create a site' }).first().waitFor({ timeout: 60_000 });

    const document = clientOpenApiDocument(t.app);
    const summaries = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.summary as string),
    );
    const shown = await headings.allInnerTexts();
    for (const summary of summaries) expect(shown, summary).toContain(summary);
    for (const event of Object.keys(document.webhooks as object)) expect(shown, event).toContain(`${event} Webhook`);
    const menu = (await page.locator('[role="menuitem"]').allTextContents()).join('\n');
    for (const summary of summaries) expect(menu, summary).toContain(summary);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
    // Redoc's deep link to an operation, by its operationId.
    await page.goto(`${t.baseUrl}/docs#tag/Sites/operation/createSite`, { waitUntil: 'load' });
    await headings.filter({ hasText: 'Create a site' }).first().waitFor({ timeout: 60_000 });
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-create-site.png') });

    // The page asked for nothing outside the service (not even something its CSP would have refused).
    const local = (url: string) => url.startsWith(t.baseUrl) || url.startsWith('data:') || url.startsWith('blob:');
    expect(requested.filter((url) => !local(url))).toEqual([]);
    expect(answered.filter((url) => !local(url))).toEqual([]);
    expect(blocked).toEqual([]);
    expect(requested).toContain(`${t.baseUrl}/api/v1/openapi.json`);
    // The sidebar footer's logo is the local mark, shown (not a broken image).
    const logo = page.locator('img[alt="redocly logo"]');
    expect(await logo.getAttribute('src')).toMatch(/^data:image\/svg\+xml,/);
    const loaded = await logo.evaluate((image) => {
      const { complete, naturalWidth } = image as unknown as { complete: boolean; naturalWidth: number };
      return complete && naturalWidth > 0;
    });
    expect(loaded).toBe(true);
    expect(problems).toEqual([]);
  });
});
