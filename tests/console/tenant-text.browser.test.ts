/**
 * Text a hostile tenant chose, as the operator console draws it (Chromium via playwright-core): a rep name set
 * through the sandbox simulator with a bidi override, a target URL and receivers' errors of one long word, and
 * an error of accents stacked on one letter. None may pass for other text, widen the page past the buttons, or
 * draw over the headings and other rows; and no HTML sink of the page may take a string. Skipped when
 * /usr/bin/chromium is missing outside CI.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserRunnable, consoleWithHarness, signInToConsole, WAIT } from '../helpers/console-browser.js';
import { admin } from '../helpers/tenants.js';
import { createVisit } from '../helpers/visits.js';

/** 300 characters, the most a sandbox listener's reported error keeps, with nowhere to break a line. */
const LONG_WORD = `forwarding-failed:${'A'.repeat(282)}`;
/** Acute accents stacked on one letter: drawn as a vertical line rising far above the text's own line. */
const STACKED = `e${'\u0301'.repeat(299)}`;

describe.skipIf(!browserRunnable)("the console and a tenant's text", () => {
  const made = consoleWithHarness({ started: false });

  it('is shown as written, inside its own cell', { timeout: 120_000 }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const subscribed = await t.http.post('/api/v1/webhook-subscriptions', {
      token: v.fullToken,
      json: {
        targetUrl: `https://localhost:${harness.receiver.port}/${'p'.repeat(1900)}`,
        eventTypes: ['ticket.created', 'rep.assigned'],
        secret: 'tenant text test secret 0123456789',
      },
    });
    expect(subscribed.status).toBe(201);
    const visit = await createVisit(t, v, { clientTicketNumber: 'TEXT-1' });
    // The tenant names the rep itself, through the sandbox simulator.
    const assigned = await t.http.post(`/api/v1/sandbox/site-visits/${visit.id}/simulate`, {
      token: v.fullToken,
      json: { action: 'assign-rep', fieldRepName: `\u202Eeel nadroJ ${'M'.repeat(180)}` },
    });
    expect(assigned.status).toBe(200);
    await createVisit(t, v, { clientTicketNumber: 'TEXT-2' });

    // Newest first: the latest delivery has no error, the one below it the stacked accents, then the long word.
    const deliveries = (await admin(t, 'GET', `/admin/v1/deliveries?tenantId=${v.tenantId}&order=desc`)).body.data;
    expect(deliveries).toHaveLength(3);
    const errors = [null, STACKED, LONG_WORD];
    for (const [index, delivery] of deliveries.entries())
      await t.database.db
        .updateTable('webhook_deliveries')
        .set({ last_error: errors[index] })
        .where('id', '=', delivery.deliveryId)
        .execute();
    await t.database.db
      .updateTable('webhook_subscriptions')
      .set({ last_error: LONG_WORD })
      .where('tenant_id', '=', v.tenantId)
      .execute();

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);

    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await row.waitFor(WAIT);
    await page.locator('tr[data-subscription]').waitFor(WAIT);
    // The override is shown, not obeyed: the name does not read "Jordan lee".
    await row.getByText(`⟨U+202E⟩eel nadroJ ${'M'.repeat(180)}`, { exact: true }).waitFor(WAIT);
    expect(await overflowing(page)).toEqual([]);

    await page.evaluate(`location.hash = ${JSON.stringify(`#/deliveries?tenantId=${v.tenantId}`)}`);
    await page.locator('tr[data-delivery]').nth(2).waitFor(WAIT);
    expect(await overflowing(page)).toEqual([]);
    // The accents stay in their own row: nothing of the error's red is drawn over the column headings.
    expect(await redPixels(browser, page.locator('table.deliveries thead'))).toBe(0);
  });

  it('cannot be made markup: every HTML sink of the page throws (Trusted Types, no policy)', async () => {
    const { harness, browser } = made;
    const page = await browser.newPage();
    await page.goto(`${harness.t.baseUrl}/console`);
    await page.getByLabel('Operator token').waitFor(WAIT);
    const sinks = await page.evaluate(`(() => {
      const tries = {
        innerHTML: () => { document.createElement('div').innerHTML = '<img src=x>'; },
        insertAdjacentHTML: () => document.body.insertAdjacentHTML('beforeend', '<b>x</b>'),
        outerHTML: () => { document.body.appendChild(document.createElement('i')).outerHTML = '<b>x</b>'; },
      };
      return Object.fromEntries(Object.entries(tries).map(([name, sink]) => {
        try { sink(); return [name, 'written']; } catch (error) { return [name, error.name]; }
      }));
    })()`);
    expect(sinks).toEqual({ innerHTML: 'TypeError', insertAdjacentHTML: 'TypeError', outerHTML: 'TypeError' });
    await page.close();
  });
});

/** The page wider than the window, and every cell whose text runs past the cell's edges. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const found = [];
    if (document.documentElement.scrollWidth > innerWidth) found.push('page: ' + document.documentElement.scrollWidth + ' px wide');
    for (const cell of document.querySelectorAll('td')) {
      const box = cell.getBoundingClientRect();
      const text = document.createRange();
      text.selectNodeContents(cell);
      for (const line of text.getClientRects())
        if (line.width > 0 && (line.left < box.left - 1 || line.right > box.right + 1)) {
          found.push('cell: ' + cell.textContent.slice(0, 40));
          break;
        }
    }
    return found;
  })()`);
}

/** Pixels of the error colour (#b42318) in a screenshot of the element, counted in a blank page's canvas. */
async function redPixels(browser: Browser, element: Locator): Promise<number> {
  const png = (await element.screenshot()).toString('base64');
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(`(async () => {
      const image = new Image();
      image.src = 'data:image/png;base64,${png}';
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      const { data } = context.getImageData(0, 0, image.width, image.height);
      let red = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i] > 140 && data[i + 1] < 70 && data[i + 2] < 70) red++;
      return red;
    })()`);
  } finally {
    await blank.close();
  }
}
