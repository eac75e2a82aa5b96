/**
 * The console shows the operator the messages a client sent about a visit (Chromium via playwright-core): opened
 * from the visit's row, oldest first, each message's text as the client wrote it (never as markup, its line
 * breaks kept, a bidi override made visible), its time, and a button that saves its attachment's latest version;
 * another visit's messages are not there, and a visit of more than a page has "More messages". Each step waits for
 * the requests its click causes. Skipped when /usr/bin/chromium is missing outside CI.
 */
import { readFileSync } from 'node:fs';
import type { Locator, Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserRunnable, consoleWithHarness, signInToConsole, WAIT } from '../helpers/console-browser.js';
import { createMessage, type MessageTenant, uploadAttachment } from '../helpers/messages.js';
import { pngBytes } from '../helpers/multipart.js';
import { createVisit } from '../helpers/visits.js';

/** Markup, a bidi override and two lines (one ended CRLF): all of it is text on the operator's screen. */
const HOSTILE = 'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\r\nKey: \u202E4321 at reception';
const HOSTILE_SHOWN =
  'Gate code <img src=x onerror="document.title=\'owned\'"> <b>bold</b>\nKey: ⟨U+202E⟩4321 at reception';

describe.skipIf(!browserRunnable)("the console's messages of a visit", () => {
  const made = consoleWithHarness({ started: false });

  it("shows a visit's messages as text, with their time, and saves an attachment", { timeout: 120_000 }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const visit = await createVisit(t, v, { clientTicketNumber: 'MSG-1' });
    const m: MessageTenant = { ...v, visitId: visit.id };
    const note = await createMessage(t, m, { messageThread: HOSTILE, type: 'Site Prep Issue', urgency: 'High' });
    const withPhoto = await createMessage(t, m, { messageThread: 'Photo of the damaged crate.', buyer: true });
    const photo = pngBytes(3000);
    photo.write('latest-photo', 40, 'latin1');
    expect((await uploadAttachment(t, v.token, withPhoto.id, pngBytes(2000), 'crate.png', 'image/png')).status).toBe(
      201,
    );
    const name = 'caisse abîmée (2).png';
    expect((await uploadAttachment(t, v.token, withPhoto.id, photo, name, 'image/png')).status).toBe(201);
    // Another visit's message: not this visit's.
    const other = await createVisit(t, v, { clientTicketNumber: 'MSG-2' });
    await createMessage(t, { ...m, visitId: other.id }, { messageThread: 'Not about MSG-1.' });
    const created = (await t.http.get(`/api/v1/messages/${note.id}`, { token: v.token })).body.data.attributes
      .createdAt;

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, timezoneId: 'UTC' });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await row.waitFor(WAIT);

    const listed = await messagesRead(page, visit.id, row.locator('[data-action="messages"]'));
    expect(listed.status()).toBe(200);
    const panel = page.locator(`tr[data-messages-of="${visit.id}"]`);
    const rows = panel.locator('tr[data-message]');
    await rows.nth(1).waitFor(WAIT);
    expect(await rows.evaluateAll((each) => each.map((tr) => tr.getAttribute('data-message')))).toEqual([
      note.id,
      withPhoto.id,
    ]);

    // The text as written: no element made of it, the line break kept, the override shown rather than obeyed.
    const first = rows.nth(0);
    // innerText, not textContent: the text as laid out, which keeps the line break only where the page does.
    // biome-ignore lint/performance/useDomNodeTextContent: playwright's Locator, the rendered text is the point
    expect(await first.locator('td.message-text').innerText()).toBe(HOSTILE_SHOWN);
    expect(await panel.locator('img, b').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    expect(await first.textContent()).toContain('Site Prep Issue');
    expect(await first.textContent()).toContain('High \u2013 Needs attention soon');
    // Its time, in the browser's time zone (UTC here), as the console writes times.
    expect(await first.locator('td.sent').textContent()).toBe(created.slice(0, 19).replace('T', ' '));
    expect(await first.locator('[data-action="attachment"]').count()).toBe(0);

    // The attachment's latest version, saved under its name.
    const second = rows.nth(1);
    await second.getByText('buyer', { exact: true }).waitFor(WAIT);
    const button = second.getByRole('button', { name: 'Download (v2)' });
    const [saved] = await Promise.all([page.waitForEvent('download', WAIT), button.click()]);
    // Under its exact name, not the ASCII one Content-Disposition gives beside it.
    expect(saved.suggestedFilename()).toBe(name);
    expect(readFileSync((await saved.path())!).equals(photo)).toBe(true);

    // Closed again.
    await row.getByRole('button', { name: 'Hide messages' }).click();
    await panel.waitFor({ ...WAIT, state: 'detached' });
    await page.close();
  });

  it('reads a visit of more than a page a page at a time, and says when a visit has none', {
    timeout: 120_000,
  }, async () => {
    const { harness, browser } = made;
    const t = harness.t;
    const v = await harness.visitTenant();
    const visit = await createVisit(t, v);
    const empty = await createVisit(t, v);
    const ids: string[] = [];
    for (let index = 0; index < 101; index++)
      ids.push((await createMessage(t, { ...v, visitId: visit.id }, { messageThread: `note ${index}` })).id);

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await signInToConsole(page, t);
    await page.evaluate(`location.hash = ${JSON.stringify(`#/tenants/${encodeURIComponent(v.tenantId)}`)}`);
    const row = page.locator(`tr[data-visit="${visit.id}"]`);
    await row.waitFor(WAIT);

    await messagesRead(page, visit.id, row.locator('[data-action="messages"]'));
    const panel = page.locator(`tr[data-messages-of="${visit.id}"]`);
    const rows = panel.locator('tr[data-message]');
    await rows.nth(99).waitFor(WAIT);
    expect(await rows.count()).toBe(100);
    const next = await messagesRead(page, visit.id, panel.locator('[data-action="more-messages"]'));
    expect(new URL(next.url()).searchParams.get('after')).toBe(ids[99]);
    await rows.nth(100).waitFor(WAIT);
    expect(await rows.evaluateAll((each) => each.map((tr) => tr.getAttribute('data-message')))).toEqual(ids);
    // The last page was shorter than a page: nothing more to read.
    expect(await panel.locator('[data-action="more-messages"]').count()).toBe(0);

    const emptyRow = page.locator(`tr[data-visit="${empty.id}"]`);
    await messagesRead(page, empty.id, emptyRow.locator('[data-action="messages"]'));
    await page.locator(`tr[data-messages-of="${empty.id}"]`).getByText('No messages on this visit.').waitFor(WAIT);
    await page.close();
  });
});

/** Clicks and answers the read of the visit's messages the click sent. */
async function messagesRead(page: Page, visitId: string, button: Locator): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse(
      (each) =>
        each.request().method() === 'GET' &&
        new URL(each.url()).pathname === `/admin/v1/site-visits/${encodeURIComponent(visitId)}/messages`,
      WAIT,
    ),
    button.click(),
  ]);
  return response;
}
