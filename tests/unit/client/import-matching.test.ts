/**
 * How svc import follows a file corrected between runs (matching.ts): which rows a run sends, under which
 * key, and which it reports without sending, from the progress log alone. The behaviour over HTTP is
 * tests/client/import-rerun.test.ts; here the cases a diff has to get right, each on a log in a temp
 * directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contentKey, type IdentifiedRow, identify } from '../../../packages/client/src/cli/import/identity.js';
import { keyFor, type RowState, rowStates } from '../../../packages/client/src/cli/import/matching.js';
import { ProgressLog } from '../../../packages/client/src/cli/import/progress-log.js';
import type { ImportResource } from '../../../packages/client/src/cli/import/rows.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-matching-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let logs = 0;

/** An import of `resource` as successive runs see it: each `run` reads a file and records what it is told. */
function importOf(resource: ImportResource) {
  const logPath = path.join(dir, `${++logs}.progress.jsonl`);
  let revision = 0;
  const run = (bodies: Array<Record<string, unknown>>) => {
    const rows = identify(
      resource,
      bodies.map((body, index) => ({ row: index + 1, line: index + 2, body })),
    );
    const sha256 = `sha-${JSON.stringify(bodies)}`;
    const log = ProgressLog.open(logPath, { resource, file: 'f.jsonl', sha256, rows, importId: 'imp', now: 'now' });
    const states = rowStates(resource, log, rows, sha256);
    if (log.revisions.at(-1)?.sha256 !== sha256)
      log.addRevision({ file: 'f.jsonl', sha256, readAt: `${++revision}`, rows: rows.map((row) => row.hash) });
    const ref = (row: IdentifiedRow) => ({
      row: row.row,
      line: row.line,
      hash: row.hash,
      n: row.n,
      key: keyFor(resource, log, row, states[row.row - 1]!),
    });
    return {
      states,
      kinds: states.map((state) => state.kind),
      key: (index: number) => ref(rows[index]!).key,
      created(index: number, id: string) {
        const row = rows[index]!;
        const natural = row.naturalKey ? { siteCode: row.naturalKey } : {};
        log.record({ ...ref(row), outcome: 'created', id, replayed: false, ...natural });
      },
      rejected(index: number, status: number, slug: string) {
        const entry = { status, type: `https://x/problems/${slug}`, title: slug, detail: slug };
        log.record({ ...ref(rows[index]!), outcome: 'rejected', ...entry });
      },
      sending(index: number) {
        log.record({ ...ref(rows[index]!), outcome: 'sending' });
      },
      /** Read back and found to match its resource (run.ts): a line without a key. */
      upToDate(index: number, id: string) {
        const { key: _key, ...place } = ref(rows[index]!);
        const natural = rows[index]!.naturalKey ? { siteCode: rows[index]!.naturalKey } : {};
        log.record({ ...place, outcome: 'up-to-date', id, checkedAt: 'now', ...natural });
      },
      close: () => log.close(),
    };
  };
  return run;
}

const note = (text: string, extra: Record<string, unknown> = {}) => ({
  siteVisitId: 'visit_1',
  messageThread: text,
  ...extra,
});
const site = (code: string, name = `Store ${code}`) => ({ siteCode: code, name });
const changed = (id: string | null, matchedBy: string): RowState => ({ kind: 'changed', id, matchedBy }) as RowState;

describe('rows corrected in place', () => {
  it('a corrected rejected row is sent under a new key; unchanged rows keep their state', () => {
    const run = importOf('messages');
    const first = run([note('a'), note('b', { urgency: 'Whenever' }), note('c')]);
    expect(first.kinds).toEqual(['new', 'new', 'new']);
    first.created(0, 'm1');
    first.rejected(1, 422, 'validation-error');
    first.created(2, 'm3');
    const rejectedKey = first.key(1);
    first.close();

    const second = run([note('a'), note('b', { urgency: 'Low' }), note('c')]);
    expect(second.kinds).toEqual(['created', 'new', 'created']);
    expect(second.key(1)).not.toBe(rejectedKey);
    second.close();
  });

  it('a created row edited in place is changed (its resource named), again after a second edit', () => {
    const run = importOf('messages');
    const first = run([note('a'), note('b'), note('c')]);
    for (const index of [0, 1, 2]) first.created(index, `m${index + 1}`);
    first.close();
    const second = run([note('a'), note('b, corrected'), note('c')]);
    expect(second.states[1]).toEqual(changed('m2', 'position'));
    second.close();
    // Edited again, with a row added before it: still the second message's row.
    const third = run([note('new first'), note('a'), note('b, corrected twice'), note('c')]);
    expect(third.kinds).toEqual(['new', 'created', 'changed', 'created']);
    expect(third.states[2]).toEqual(changed('m2', 'position'));
    third.close();
  });

  it("a site is found by its siteCode wherever it moved; another row with a created row's siteCode is sent (the service's 409)", () => {
    const run = importOf('sites');
    const first = run([site('S-1'), site('S-2'), site('S-3')]);
    for (const index of [0, 1, 2]) first.created(index, `site_${index + 1}`);
    first.close();
    const second = run([site('S-2'), site('S-3'), site('S-1', 'Renamed'), site('S-3', 'Copy')]);
    expect(second.states).toEqual([
      { kind: 'created', id: 'site_2' },
      { kind: 'created', id: 'site_3' },
      changed('site_1', 'siteCode'),
      { kind: 'new' },
    ]);
    second.close();
  });
});

describe('rows added, inserted, removed and moved', () => {
  it('creates nothing twice: moved rows are known, added rows are new, a removed row takes nothing with it', () => {
    const run = importOf('messages');
    const first = run([note('a'), note('b'), note('c'), note('d')]);
    for (const index of [0, 1, 2, 3]) first.created(index, `m${index + 1}`);
    first.close();
    // b removed, d moved to the front, x inserted, y appended.
    const second = run([note('d'), note('a'), note('x'), note('c'), note('y')]);
    expect(second.states).toEqual([
      { kind: 'created', id: 'm4' },
      { kind: 'created', id: 'm1' },
      // x took b's place (between a and c, where b was removed): it may be b corrected, so it is not sent.
      changed('m2', 'position'),
      { kind: 'created', id: 'm3' },
      { kind: 'new' },
    ]);
    second.close();
  });

  it('rows inserted where nothing was removed are new; two identical rows are two rows with their own keys', () => {
    const run = importOf('messages');
    const first = run([note('a'), note('b')]);
    first.created(0, 'm1');
    first.created(1, 'm2');
    first.close();
    const second = run([note('a'), note('same'), note('same'), note('b')]);
    expect(second.kinds).toEqual(['created', 'new', 'new', 'created']);
    expect(second.key(1)).not.toBe(second.key(2));
    expect(second.key(1)).toBe(contentKey('messages', 'imp', { hash: identifyHash(note('same')), n: 1 }));
    second.close();
  });
});

describe('requests whose answer was lost', () => {
  it('an unchanged row is sent again under its key; a corrected one under the key of the row it replaced', () => {
    const run = importOf('messages');
    const first = run([note('a'), note('b')]);
    first.created(0, 'm1');
    first.sending(1);
    const lostKey = first.key(1);
    first.close();
    const resumed = run([note('a'), note('b')]);
    expect(resumed.states[1]).toEqual({ kind: 'in-doubt', key: lostKey });
    resumed.close();
    const corrected = run([note('a'), note('b, corrected')]);
    expect(corrected.states[1]).toEqual({ kind: 'in-doubt', key: lostKey });
    expect(corrected.key(1)).toBe(lostKey);
    // The service answers that key 409 idempotency-conflict: the earlier content had been created.
    corrected.rejected(1, 409, 'idempotency-conflict');
    corrected.close();
    const again = run([note('a'), note('b, corrected')]);
    expect(again.states[1]).toEqual(changed(null, 'key'));
    again.close();
  });
});

describe('rows changed after creation, then found up to date with their resource', () => {
  it('stays up to date on later runs; edited again, it is that resource changed again, by siteCode or by place', () => {
    const run = importOf('sites');
    const first = run([site('S-1'), site('S-2')]);
    first.created(0, 'site_1');
    first.created(1, 'site_2');
    first.close();
    const second = run([site('S-1', 'Renamed'), site('S-2')]);
    expect(second.states[0]).toEqual(changed('site_1', 'siteCode'));
    second.upToDate(0, 'site_1');
    second.close();
    expect(run([site('S-1', 'Renamed'), site('S-2')]).kinds).toEqual(['up-to-date', 'created']);

    // A new siteCode (found by its place), which the PATCH gives the site too; then the row is edited again
    // and moved: found by the new code, which the up-to-date line records.
    const third = run([site('S-1B', 'Renamed'), site('S-2')]);
    expect(third.states[0]).toEqual(changed('site_1', 'position'));
    third.upToDate(0, 'site_1');
    third.close();
    const fourth = run([site('S-2'), site('S-1B', 'Renamed again')]);
    expect(fourth.states).toEqual([{ kind: 'created', id: 'site_2' }, changed('site_1', 'siteCode')]);
    fourth.close();

    const messages = importOf('messages');
    const one = messages([note('a'), note('b')]);
    one.created(0, 'm1');
    one.created(1, 'm2');
    one.close();
    const two = messages([note('a'), note('b, corrected')]);
    two.upToDate(1, 'm2');
    two.close();
    expect(messages([note('a'), note('b, corrected twice')]).states[1]).toEqual(changed('m2', 'position'));
  });
});

function identifyHash(body: Record<string, unknown>): string {
  return identify('messages', [{ row: 1, line: 1, body }])[0]!.hash;
}
