/**
 * The console's inbox (Chromium via playwright-core): the clients' latest messages of every tenant, newest first,
 * those not handled yet unless "Show" says otherwise, with their tenant and visit, their text as text (never
 * markup); read again while "Watch" is on; "Mark handled" shared by the whole operator (a second browser sees it
 * and its count follows), at the version shown (a message the client changed after it was shown is left, said so,
 * and shown again); "new" for what arrived while the page was open, nothing kept in the browser; the
 * navigation's count of unhandled messages, shown stale while its read fails; and a visit's link opens its
 * messages. Each step waits for what the page is to show. Skipped when /usr/bin/chromium is missing outside CI.
 */
import type { Page, Route } from 'playwright-core';
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
const COUNT = '/admin/v1/messages/unhandled-count';

describe.skipIf(!browserRunnable)("the console's inbox", () => {
  const made = consoleWithApp();

  it('lists what is not handled, marks handled for the whole operator, counts what is left, and leads to the visit', {
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
    await signInToConsole(page, t);
    await navLink(page, 'Messages (2)').click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor(WAIT);
    const row = (id: string) => page.locator(`tr[data-inbox-message="${id}"]`);
    await row(hostile.id).waitFor(WAIT);
    expect(await listed(page)).toEqual([long.id, hostile.id]);
    // What was there when the page opened is not "new".
    expect(await arrivedRows(page)).toEqual([]);

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

    // A message arriving while the page watches: listed at the next read, new, and counted.
    const arrived = await createMessage(t, a, { messageThread: 'Arrived while watching.' });
    await page.locator(`tr[data-inbox-message="${arrived.id}"][data-arrived]`).waitFor(WAIT);
    expect(await arrivedRows(page)).toEqual([arrived.id]);
    await navLink(page, 'Messages (3)').waitFor(WAIT);

    // Another person of the operator's team, in a browser of their own, counts the same three.
    const other = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(other, t);
    await navLink(other, 'Messages (3)').waitFor(WAIT);

    // Handled here: gone from the list of what is not handled, and from both counts.
    await row(arrived.id).getByRole('button', { name: 'Mark handled' }).click();
    await row(arrived.id).waitFor({ ...WAIT, state: 'detached' });
    await navLink(page, 'Messages (2)').waitFor(WAIT);
    await navLink(other, 'Messages (2)').click();
    await other.locator(`tr[data-inbox-message="${long.id}"]`).waitFor(WAIT);
    expect(await listed(other)).toEqual([long.id, hostile.id]);

    // There, "All" lists it handled (nothing of the first listing "new"); "Not handled" puts it back for everyone.
    await other.getByLabel('Show').selectOption('all');
    const handledRow = other.locator(`tr[data-inbox-message="${arrived.id}"][data-handled]`);
    await handledRow.waitFor(WAIT);
    expect(await listed(other)).toEqual([arrived.id, long.id, hostile.id]);
    expect(await arrivedRows(other)).toEqual([]);
    expect(await handledRow.locator('td.handled').textContent()).toContain('handled');
    await handledRow.getByRole('button', { name: 'Not handled' }).click();
    await other.locator(`tr[data-inbox-message="${arrived.id}"]:not([data-handled])`).waitFor(WAIT);
    await navLink(page, 'Messages (3)').waitFor(WAIT);
    // Listed here again, and new: it was not in the list when this page's filter was chosen.
    await page.locator(`tr[data-inbox-message="${arrived.id}"][data-arrived]`).waitFor(WAIT);

    // Everything listed at once: nothing left here, nor in the other browser's count.
    await page.getByRole('button', { name: 'Mark all listed handled (3)' }).click();
    await page.getByText('Nothing to handle: clients send messages').waitFor(WAIT);
    await navLink(page, 'Messages').waitFor(WAIT);
    await navLink(other, 'Messages').waitFor(WAIT);
    expect((await admin(t, 'GET', COUNT)).body.data).toEqual({ unhandled: 0, more: false });
    // Nothing of it kept in the browser.
    expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
    await other.close();

    // The visit's link (from "All") opens the visit with its messages, the message among them.
    await page.getByLabel('Show').selectOption('all');
    await row(hostile.id).waitFor(WAIT);
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
    expect(await page.evaluate('location.hash')).toBe(`#/visits/${a.visitId}`);
    await page.close();
  });

  it('marks new a message committed after a later one was listed, keeps one tenant, and shows a stale count', {
    timeout: 180_000,
  }, async () => {
    const { t, browser } = made;
    const a = await messageTenant(t);
    const b = await messageTenant(t);
    const quiet = await messageTenant(t);
    const before = await createMessage(t, b, { messageThread: 'Before the page opened.' });

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);
    await navLink(page, 'Messages (1)').click();
    await page.locator(`tr[data-inbox-message="${before.id}"]`).waitFor(WAIT);

    // The race: X takes its place first, a later create commits and is listed, then X commits below it: new too.
    const slot = await takeArrivalSlot(t);
    const later = await createMessage(t, a, { messageThread: 'Committed first.' });
    await page.locator(`tr[data-inbox-message="${later.id}"][data-arrived]`).waitFor(WAIT);
    const x = await commitInSlot(t, slot, b, 'Committed last, placed earlier.');
    await page.locator(`tr[data-inbox-message="${x}"][data-arrived]`).waitFor(WAIT);
    expect(await listed(page)).toEqual([later.id, x, before.id]);
    expect(await arrivedRows(page)).toEqual([later.id, x]);
    await navLink(page, 'Messages (3)').waitFor(WAIT);

    // One tenant's: its messages only, the choice in the address; what arrives for the others is counted.
    await page.getByLabel('Tenant').selectOption(b.tenantId);
    await expect.poll(() => page.evaluate('location.hash'), WAIT).toBe(`#/messages?tenantId=${b.tenantId}`);
    await page.locator(`tr[data-inbox-message="${later.id}"]`).waitFor({ ...WAIT, state: 'detached' });
    // The other tenant's rows go as soon as the choice changes, before this tenant's page is read: wait for it.
    await page.locator(`tr[data-inbox-message="${x}"]`).waitFor(WAIT);
    expect(await listed(page)).toEqual([x, before.id]);
    expect(await arrivedRows(page)).toEqual([]);
    await createMessage(t, a, { messageThread: 'For the other tenant.' });
    await navLink(page, 'Messages (4)').waitFor(WAIT);

    // The count's read fails: the last count stays, said to be stale, until a read succeeds again.
    await page.route(`**${COUNT}`, (route) => route.abort('connectionrefused'));
    const stale = page.locator('nav a[data-testid="messages-link"][data-stale]');
    await stale.waitFor(WAIT);
    expect(await stale.textContent()).toBe('Messages (4?)');
    expect(await stale.getAttribute('title')).toMatch(
      /^The count could not be read .*the last count \(4\) was read at/,
    );
    await page.unroute(`**${COUNT}`);
    await navLink(page, 'Messages (4)').waitFor(WAIT);
    expect(await page.locator('nav a[data-stale]').count()).toBe(0);

    // A tenant without messages says so; from its page, its messages' link.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${quiet.tenantId}`)}`);
    await page.getByRole('link', { name: "This tenant's messages" }).click();
    await page.getByText('Nothing to handle from this tenant').waitFor(WAIT);
    await page.close();
  });

  it('leaves a message the client changed after it was shown, says so, and shows its newer text not handled', {
    timeout: 180_000,
  }, async () => {
    const { t, browser } = made;
    const c = await messageTenant(t);
    const kept = await createMessage(t, c, { messageThread: 'Read as it is.' });
    const changing = await createMessage(t, c, { messageThread: 'Read before the change.' });
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/messages?tenantId=${c.tenantId}`)}`);
    const row = (id: string) => page.locator(`tr[data-inbox-message="${id}"]`);
    await row(changing.id).waitFor(WAIT);
    await row(kept.id).waitFor(WAIT);

    // The page's reads are held from here: it shows what it read while the client changes one message.
    const held: Route[] = [];
    let holding = true;
    const inboxRead = (url: URL) => url.pathname === '/admin/v1/messages';
    await page.route(inboxRead, (route) => (holding ? held.push(route) : route.continue()));
    const newer = 'The gate code is now 9876.';
    const patched = await t.http.patch(`/api/v1/messages/${changing.id}`, {
      token: c.token,
      json: { messageThread: newer },
    });
    expect(patched.status, patched.text).toBe(200);
    const [marked] = await Promise.all([
      page.waitForResponse((each) => new URL(each.url()).pathname === '/admin/v1/messages/handled', WAIT),
      page.getByRole('button', { name: 'Mark all listed handled (2)' }).click(),
    ]);
    // It sent the versions it showed; the changed one was left.
    expect(JSON.parse(marked.request().postData()!)).toEqual({
      messages: [
        { messageId: changing.id, version: 1 },
        { messageId: kept.id, version: 1 },
      ],
      handled: true,
    });
    expect((await marked.json()).data).toEqual({
      handled: true,
      changed: 1,
      stale: [{ messageId: changing.id, version: 2 }],
    });
    holding = false;
    for (const route of held) await route.continue();
    await page.unroute(inboxRead);

    // Read again: the marked one is gone; the changed one stays, not handled, its newer text shown, and a notice.
    await row(kept.id).waitFor({ ...WAIT, state: 'detached' });
    const changedRow = page.locator(`tr[data-inbox-message="${changing.id}"][data-changed]:not([data-handled])`);
    await changedRow.waitFor(WAIT);
    expect(await changedRow.locator('td.message-text').textContent()).toBe(newer);
    expect(await page.locator('[data-changed-notice]').textContent()).toContain(
      'One message was changed by the client after this page showed it',
    );
    // Marked once its newer text was shown: the notice goes.
    await changedRow.getByRole('button', { name: 'Mark handled' }).click();
    await row(changing.id).waitFor({ ...WAIT, state: 'detached' });
    expect(await page.locator('[data-changed-notice]').count()).toBe(0);
    const counted = await admin(t, 'GET', `${COUNT}?tenantId=${encodeURIComponent(c.tenantId)}`);
    expect(counted.body.data).toEqual({ unhandled: 0, more: false });
    await page.close();
  });
});

/** The tenant's name and the visit's ticket number, as the operator API has them. */
async function names(t: TestApp, tenantId: string, visitId: string): Promise<[string, string]> {
  const tenant = await admin(t, 'GET', `/admin/v1/tenants/${tenantId}`);
  const visit = await admin(t, 'GET', `/admin/v1/site-visits/${visitId}`);
  return [tenant.body.data.name, visit.body.data.attributes.clientTicketNumber];
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

function arrivedRows(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-inbox-message][data-arrived]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-inbox-message')!));
}
