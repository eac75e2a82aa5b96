/**
 * README "Walkthrough: the first integration" and the bulk import block, run as written against a sandbox
 * started with `npm start` (tests/helpers/readme-shell.ts): every answer a success, the uploads made by the
 * README's own commands accepted and downloaded unchanged, and step 7's events delivered for real through
 * `svc listen` to the example receiver, which verifies each. Also what the README says of a first start: the
 * progress lines on stderr, the credential packet on stdout. Then the operator's blocks (a visit through the
 * workflow, the walkthrough's label and photo downloaded, the inbox, deliveries; a tenant onboarded) and the client
 * package README's "Calling the API" script, as written, against that sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientReadmeExample, openReadmeShell, type ReadmeShell, readmeBlock } from '../helpers/readme-shell.js';

let shell: ReadmeShell;
beforeAll(async () => {
  shell = await openReadmeShell('readme-walkthrough');
  // A reader of the walkthrough is in the checkout, with the sandbox started.
  await shell.run('cd site-services');
  await shell.run('npm start &');
  await shell.sandboxStarted();
}, 300_000);
afterAll(async () => shell?.close());

describe('README', () => {
  it('a first start: progress on stderr, the credential packet and the operator token on stdout', () => {
    expect(shell.stderr()).toContain('site-services: provisioning the sandbox tenant…');
    expect(shell.stderr()).toMatch(/site-services: listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(shell.stdout()).toMatch(/Its credential packet \(also in \S+credentials\.json\):\n\{\n {2}"baseUrl"/);
    expect(shell.stdout()).toContain('Operator API token');
    expect(shell.stderr()).not.toMatch(/credential packet|"client_secret"/);
  });

  it('the walkthrough works as written, to events verified by a receiver on this machine', async () => {
    await shell.runBlock(readmeBlock('## Walkthrough: the first integration'));
    // Every answer a success: a problem's type is an address under /problems/.
    expect(shell.output()).not.toMatch(/\/problems\//);
    expect(shell.stdout()).toContain('etag: "1"');
    // The second page of one, reached with the first page's cursor, is the last: no nextCursor.
    expect(shell.stdout()).toMatch(/"siteCode":"S-42"[^\n]*\],"meta":\{"pageSize":1\}\}/);
    // The files the README's commands make are accepted, and come back unchanged.
    expect(shell.read('return-label.pdf')).toMatch(/^%PDF-1\.4\n/);
    expect(shell.read('downloaded-label.pdf')).toBe(shell.read('return-label.pdf'));
    expect(shell.exists('downloaded-photo.png')).toBe(true);
    expect(shell.read('downloaded-photo.png')).toBe(shell.read('photo.png'));

    const simulated = /\{\n {2}"status": "Completed",\n {2}"events": (\[[\s\S]*?\n {2}\])\n\}/.exec(shell.stdout());
    expect(simulated, shell.output()).not.toBeNull();
    const events = (JSON.parse(simulated![1]!) as { id: string; type: string }[]).map(
      (event) => `${event.type} ${event.id}`,
    );
    expect(events).toHaveLength(6);
    // The example receiver stores an event only once verifyWebhook accepted it; each arrived at the first attempt.
    await shell.until(
      () => events.every((event) => shell.output().includes(`stored ${event}`)),
      'the receiver storing every event',
    );
    expect(shell.output()).not.toMatch(/refused delivery/);
    // svc listen logs an attempt once the receiver's answer is back, a moment after the receiver stored it.
    const logged = events.map((event) => {
      const [type, id] = event.split(' ');
      return new RegExp(`${type!.replace('.', '\\.')} {2}${id} {2}attempt 1 {2}200 `);
    });
    await shell.until(
      () => logged.every((line) => line.test(shell.read('listen.log'))),
      'svc listen logging every event at its first attempt, answered 200',
    );
  }, 300_000);

  it("the operator's blocks work as written, after the walkthrough (its $VISIT_ID and $MESSAGE_ID)", async () => {
    const from = shell.output().length;
    await shell.runBlock(readmeBlock('## Operator: visits and their workflow'));
    await shell.runBlock(readmeBlock('## Operator: tenants'));
    const printed = shell.output().slice(from);
    // Every action's answer as wf prints it, to Completed at version 7; the last one refused (wf prints its detail).
    expect(printed, printed).toContain(
      '{"status":"Completed","version":7,"rep":"Jordan Lee","date":"2026-12-03","eta":"10:00","problem":null}',
    );
    expect(printed).toContain('"problem":"The visit is Completed: schedule is allowed only on a visit that is New');
    expect(printed).toMatch(
      /"qualityReviewPassed":true,"deliverablesTransmittedAt":"[^"]+","deliverablesNotes":"Photos attached\."/,
    );
    // The operator's downloads are the files the walkthrough uploaded, which they leave as they were.
    expect(shell.read('operator-return-label.pdf')).toMatch(/^%PDF-1\.4\n/);
    expect(shell.read('operator-return-label.pdf')).toBe(shell.read('return-label.pdf'));
    expect(shell.read('operator-attachment.png')).toBe(shell.read('photo.png'));
    expect(printed).toContain('"text":"Please also check the receipt printer.","file":"photo.png"');
    expect(printed).toMatch(/"tenant":"Sandbox Demo Client","ticket":"INC-1001"/);
    // The count (the walkthrough's one message), that message marked handled for the operator, none left.
    expect(printed).toContain('{"unhandled":1,"more":false}');
    expect(printed).toContain('{"handled":true,"changed":1,"stale":[]}');
    expect(printed).toMatch(/^\[\]$/m);
    expect(printed).toMatch(/\{"eventType":"ticket\.created","status":"/);
    // The tenants block: the first pair shown, revoked (204), the flag changed.
    expect(printed).toMatch(/"client_secret": "secret_/);
    expect(printed).toMatch(/^204$/m);
    expect(printed).toMatch(/\{"id":"tnt_\w+","webhookAccess":false\}/);
    expect(printed).not.toMatch(/\/problems\//);
  }, 300_000);

  it('the client README\'s "Calling the API" script works as written, on the walkthrough\'s sandbox and label', async () => {
    const script = clientReadmeExample('### Calling the API', '<!-- example: calling the API');
    // An integrator's project holds the packet and the label beside the script: here the checkout does.
    await shell.run(`cat > usage.mjs <<'SCRIPT'\n${script}SCRIPT`);
    await shell.run('cp data/credentials.json credentials.json && node usage.mjs');
    const printed = shell.stdout();
    expect(printed, shell.output()).toContain('found true');
    expect(printed).toMatch(/^site S-42$[\s\S]*^site S-43$/m);
    expect(printed).toContain('updated Shelbyville "2"');
    expect(printed).toContain('conflict 409');
    expect(printed).toContain('label version 1');
    expect(printed).toContain('message 1');
  }, 300_000);

  it('the bulk import block works as written (the sandbox commands that run until Ctrl-C or name a visit left out)', async () => {
    const block = readmeBlock('### Bulk import: `svc import`')
      .split('\n')
      .filter((line) => !/^npx svc (listen|trigger) /.test(line))
      .join('\n');
    await shell.runBlock(block);
    expect(shell.output()).toContain('sites: 2 rows; created 2 now');
    expect(shell.output()).toContain('site-visits: 2 rows; created 2 now');
    expect(shell.output()).toMatch(/"siteCode": "S-1"/);
    expect(JSON.parse(shell.read('visits-report.json'))).toMatchObject({
      status: 'completed',
      created: 2,
      rejected: [],
    });
  }, 300_000);
});
