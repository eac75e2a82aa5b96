/**
 * The console's inbox (Chromium via playwright-core): the clients' latest messages of every tenant, newest first,
 * with their tenant and visit, their text as text (never markup); read again while "Watch" is on; those that
 * arrived since the operator last looked marked new, what was looked at kept in the browser across a reload (which
 * signs out); and a visit's link opens its messages. Each step waits for what the page is to show, or for the
 * request a click sends. Skipped when /usr/bin/chromium is missing outside CI.
 */
import type { Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { browserRunnable, consoleWithApp, signInToConsole, WAIT } from '../helpers/console-browser.js';
import {
  commitInSlot,
  createMessage,
  messageTenant,
  takeArrivalSlot,
  uploadAttachment,
  URGENCY,
} from '../helpers/messages.js';
import { pdfBytes } from '../helpers/multipart.js';
import { admin } from '../helpers/tenants.js';

/** Markup, a bidi override and two lines: all of it text on the operator's screen. */
const HOSTILE = 'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\nKey: \u202E4321 at reception';
const HOSTILE_SHOWN =
  'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\nKey: ⟨U+202E⟩4321 at reception';
const LONG = `${'w'.repeat(199)}XYZ and more`;
/** Where the console keeps what the operator has seen (console/seen.js). */
const SEEN_KEY = 'site-services.console.inbox.seen';

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
    // This browser never listed the inbox: what is there now is the start, nothing of it new.
    await page.getByTestId('unseen-count').getByText('Nothing new since you last looked.').waitFor(WAIT);
    expect(await unseen(page)).toEqual([]);

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

    // A message arriving while the page watches: listed at the next read, new.
    const arrived = await createMessage(t, a, { messageThread: 'Arrived while watching.' });
    await page.locator(`tr[data-inbox-message="${arrived.id}"][data-unseen]`).waitFor(WAIT);
    expect(await unseen(page)).toEqual([arrived.id]);
    await page.getByTestId('unseen-count').getByText('1 new since you last looked.').waitFor(WAIT);
    await page.getByRole('button', { name: 'Mark all as seen' }).click();
    await page.getByTestId('unseen-count').getByText('Nothing new since you last looked.').waitFor(WAIT);
    expect(await unseen(page)).toEqual([]);

    // Another while the operator is away (a reload signs out): after signing in again, only that one is new.
    await page.reload();
    const away = await createMessage(t, b, { messageThread: 'Arrived while away.' });
    await signInToConsole(page, t);
    // Counted in the navigation on every page; opening the inbox shows it, and the count goes.
    await navLink(page, 'Messages (1)').click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor(WAIT);
    await row(away.id).waitFor(WAIT);
    expect(await listed(page)).toEqual([away.id, arrived.id, long.id, hostile.id]);
    expect(await unseen(page)).toEqual([away.id]);
    await navLink(page, 'Messages').waitFor(WAIT);
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

  it("marks and counts a message whose create committed after a later one was listed, and keeps one tenant's", {
    timeout: 180_000,
  }, async () => {
    const { t, browser } = made;
    const a = await messageTenant(t);
    const b = await messageTenant(t);
    const quiet = await messageTenant(t);
    await createMessage(t, b, { messageThread: 'Before this browser looked.' });

    // A browser that never listed the inbox: its first read (the navigation's) is the start, nothing counted.
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const firstRead = page.waitForResponse(inboxRead, WAIT);
    await signInToConsole(page, t);
    await firstRead;
    await page.waitForFunction(`localStorage.getItem(${JSON.stringify(SEEN_KEY)}) !== null`, undefined, WAIT);
    await navLink(page, 'Messages').waitFor(WAIT);

    // The race: X takes its place first, a later create commits, is counted and shown, then X commits below it.
    const slot = await takeArrivalSlot(t);
    const later = await createMessage(t, a, { messageThread: 'Committed first.' });
    await navLink(page, 'Messages (1)').click();
    await page.locator(`tr[data-inbox-message="${later.id}"][data-unseen]`).waitFor(WAIT);
    await navLink(page, 'Messages').waitFor(WAIT);
    await navLink(page, 'Tenants').click();
    const x = await commitInSlot(t, slot, b, 'Committed last, placed earlier.');
    // Counted on another page, and new in the inbox, below the one already shown.
    await navLink(page, 'Messages (1)').click();
    await page.locator(`tr[data-inbox-message="${x}"][data-unseen]`).waitFor(WAIT);
    expect(await unseen(page)).toEqual([x]);
    expect((await listed(page)).slice(0, 2)).toEqual([later.id, x]);
    await navLink(page, 'Messages').waitFor(WAIT);

    // The same race under the open page, after "Mark all as seen": the late one is new, though below a seen one.
    await page.getByRole('button', { name: 'Mark all as seen' }).click();
    const slot2 = await takeArrivalSlot(t);
    const later2 = await createMessage(t, a, { messageThread: 'Committed first, again.' });
    await page.locator(`tr[data-inbox-message="${later2.id}"][data-unseen]`).waitFor(WAIT);
    await page.getByRole('button', { name: 'Mark all as seen' }).click();
    await page.getByTestId('unseen-count').getByText('Nothing new since you last looked.').waitFor(WAIT);
    const y = await commitInSlot(t, slot2, b, 'Committed last again.');
    await page.locator(`tr[data-inbox-message="${y}"][data-unseen]`).waitFor(WAIT);
    expect(await unseen(page)).toEqual([y]);
    expect((await listed(page)).indexOf(y)).toBeGreaterThan((await listed(page)).indexOf(later2.id));

    // One tenant's: its messages only, in the address; the navigation counts what arrives for the others.
    await page.getByLabel('Tenant').selectOption(b.tenantId);
    await page.waitForFunction(
      `location.hash === ${JSON.stringify(`#/messages?tenantId=${b.tenantId}`)}`,
      undefined,
      WAIT,
    );
    await page.locator(`tr[data-inbox-message="${later.id}"]`).waitFor({ ...WAIT, state: 'detached' });
    // The other tenant's rows go as soon as the choice changes, before this tenant's page is read: wait for it.
    await page.locator(`tr[data-inbox-message="${y}"]`).waitFor(WAIT);
    expect(await listed(page)).toEqual(expect.arrayContaining([x, y]));
    expect(await tenantsListed(page)).toEqual([b.tenantId]);
    expect(await unseen(page)).toEqual([y]);
    const elsewhere = await createMessage(t, a, { messageThread: 'For the other tenant.' });
    await navLink(page, 'Messages (1)').waitFor(WAIT);
    await page.getByLabel('Tenant').selectOption('');
    await page.locator(`tr[data-inbox-message="${elsewhere.id}"][data-unseen]`).waitFor(WAIT);
    await navLink(page, 'Messages').waitFor(WAIT);

    // A tenant without messages says so; from its page, its messages' link.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${quiet.tenantId}`)}`);
    await page.getByRole('link', { name: "This tenant's messages" }).click();
    await page.getByText('No messages from this tenant yet').waitFor(WAIT);
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

/** The navigation's link to the inbox, named exactly (with its count, or none). */
function navLink(page: Page, name: string) {
  return page.getByRole('navigation').getByRole('link', { name, exact: true });
}

function inboxRead(response: Response): boolean {
  return new URL(response.url()).pathname === '/admin/v1/messages' && response.status() === 200;
}

function tenantsListed(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-inbox-message] a[href^="#/tenants/"]')
    .evaluateAll((links) => [
      ...new Set(links.map((link) => decodeURIComponent(link.getAttribute('href')!.slice(10)))),
    ]);
}

function unseen(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-inbox-message][data-unseen]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-inbox-message')!));
}
