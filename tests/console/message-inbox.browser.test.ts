/**
 * The console's inbox (Chromium via playwright-core): the clients' latest messages of every tenant, newest first,
 * with their tenant and visit, their text as text (never markup); read again while "Watch" is on; those that
 * arrived since the operator last looked marked new, what was looked at kept in the browser across a reload (which
 * signs out); and a visit's link opens its messages. Each step waits for what the page is to show, or for the
 * request a click sends. Skipped when /usr/bin/chromium is missing outside CI.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { browserRunnable, consoleWithApp, signInToConsole, WAIT } from '../helpers/console-browser.js';
import { createMessage, messageTenant, uploadAttachment, URGENCY } from '../helpers/messages.js';
import { pdfBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';

/** Markup, a bidi override and two lines: all of it text on the operator's screen. */
const HOSTILE = 'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\nKey: \u202E4321 at reception';
const HOSTILE_SHOWN =
  'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\nKey: ⟨U+202E⟩4321 at reception';
const LONG = `${'w'.repeat(199)}XYZ and more`;

describe.skipIf(!browserRunnable)("the console's inbox", () => {
  const made = consoleWithApp();

  it('lists the latest messages of every tenant, marks what arrived since the operator last looked, and leads to the visit', {
    timeout: 180_000,
  }, async () => {
    const { t, browser } = made;
    const a = await messageTenant(t);
    const b = await messageTenant(t);
    const [nameA, ticketA] = await names(t, a.tenantId, a.visitId);
    const [nameB] = await names(t, b.tenantId, b.visitId);
    const hostile = await createMessage(t, a, { messageThread: HOSTILE, type: 'Site Prep Issue', urgency: 'High' });
    const long = await createMessage(t, b, { messageThread: LONG });
    expect((await uploadAttachment(t, b.token, long.id, pdfBytes(1000))).status).toBe(201);

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await openInbox(page, t);
    const rows = page.locator('tr[data-inbox-message]');
    const row = (id: string) => page.locator(`tr[data-inbox-message="${id}"]`);
    await rows.nth(1).waitFor(WAIT);
    expect(await listed(page)).toEqual([long.id, hostile.id]);
    // Never looked before: every message is new.
    expect(await unseen(page)).toEqual([long.id, hostile.id]);
    await page.getByTestId('unseen-count').getByText('2 new since you last looked.').waitFor(WAIT);

    // Its tenant and visit, and the text as written: no element made of it, the override shown rather than obeyed.
    const first = row(hostile.id);
    expect(await first.textContent()).toContain(nameA);
    expect(await first.locator('[data-action="visit-messages"]').textContent()).toBe(ticketA);
    expect(await first.textContent()).toContain(URGENCY.High);
    // biome-ignore lint/performance/useDomNodeTextContent: playwright's Locator, the rendered text is the point
    expect(await first.locator('td.message-text').innerText()).toBe(HOSTILE_SHOWN);
    expect(await page.locator('table.inbox img, table.inbox b').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    // The long one cut at 200 characters, said to be cut; its attachment noted.
    expect(await row(long.id).locator('td.message-text').textContent()).toBe(`${LONG.slice(0, 200)}…`);
    expect(await row(long.id).textContent()).toContain(nameB);
    expect(await row(long.id).locator('td').nth(5).textContent()).toBe('yes');

    await page.getByRole('button', { name: 'Mark all as seen' }).click();
    await page.getByTestId('unseen-count').getByText('Nothing new since you last looked.').waitFor(WAIT);
    expect(await unseen(page)).toEqual([]);

    // A message arriving while the page watches: listed at the next read, new.
    const arrived = await createMessage(t, a, { messageThread: 'Arrived while watching.' });
    await page.locator(`tr[data-inbox-message="${arrived.id}"][data-unseen]`).waitFor(WAIT);
    expect(await unseen(page)).toEqual([arrived.id]);

    // Another while the operator is away (a reload signs out): after signing in again, only that one is new.
    await page.reload();
    const away = await createMessage(t, b, { messageThread: 'Arrived while away.' });
    await openInbox(page, t);
    await row(away.id).waitFor(WAIT);
    expect(await listed(page)).toEqual([away.id, arrived.id, long.id, hostile.id]);
    expect(await unseen(page)).toEqual([away.id]);
    // What the browser keeps: a message's id and time, nothing of its text, never the token.
    const kept = String(await page.evaluate('JSON.stringify(localStorage)'));
    expect(kept).toContain(away.id);
    expect(kept).not.toContain(t.adminToken);
    expect(kept).not.toContain('Arrived while away.');

    // The visit's link opens the visit with its messages, the message among them.
    const [response] = await Promise.all([
      page.waitForResponse(
        (each) => new URL(each.url()).pathname === `/admin/v1/site-visits/${encodeURIComponent(a.visitId)}/messages`,
        WAIT,
      ),
      first.locator('[data-action="visit-messages"]').click(),
    ]);
    expect(response.status()).toBe(200);
    const panel = page.locator(`tr[data-messages-of="${a.visitId}"]`);
    await panel.locator(`tr[data-message="${hostile.id}"]`).waitFor(WAIT);
    await panel.locator(`tr[data-message="${arrived.id}"]`).waitFor(WAIT);
    expect(await page.locator(`tr[data-visit="${a.visitId}"]`).count()).toBe(1);
    expect(await page.evaluate('location.hash')).toBe(`#/visits/${a.visitId}`);
    await page.close();
  });
});

/** The tenant's name and the visit's ticket number, as the operator API has them. */
async function names(t: TestApp, tenantId: string, visitId: string): Promise<[string, string]> {
  const tenant = await admin(t, 'GET', `/admin/v1/tenants/${tenantId}`);
  const visit = await admin(t, 'GET', `/admin/v1/site-visits/${visitId}`);
  return [tenant.body.data.name, visit.body.data.attributes.clientTicketNumber];
}

/** Signs in and opens the inbox through the navigation. */
async function openInbox(page: Page, t: TestApp): Promise<void> {
  await signInToConsole(page, t);
  await page.getByRole('link', { name: 'Messages' }).click();
  await page.getByRole('heading', { name: 'Messages' }).waitFor(WAIT);
}

function listed(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-inbox-message]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-inbox-message')!));
}

function unseen(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-inbox-message][data-unseen]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-inbox-message')!));
}
