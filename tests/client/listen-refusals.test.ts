/**
 * `svc listen` when the service refuses to open a listener: the exit code says "fix the command or the
 * credentials" (2), never "interrupted, run again to resume" (3), which no re-run can satisfy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { svcEnv } from '../helpers/client.js';
import { startVisitApp, type VisitTenant } from '../helpers/visits.js';
import { runSvcInProcess } from './svc-in-process.js';

let t: TestApp;
let v: VisitTenant;

beforeAll(async () => {
  ({ t, v } = await startVisitApp());
});
afterAll(async () => t?.close());

const listen = (args: string[], extra: Record<string, string> = {}) =>
  runSvcInProcess(t, ['listen', '--forward-to', 'http://127.0.0.1:9/webhooks', ...args], svcEnv(t, v, extra));

describe('svc listen refused by the service', () => {
  it('an unknown event type (422) exits 2, naming the problem and the types there are', async () => {
    const run = await listen(['--events', 'ticket.created,ticket.exploded']);
    expect(run.stderr).toContain('422');
    expect(run.stderr).toMatch(
      /^ {2}eventTypes\[1\]: must be one of: ticket\.created; rep\.assigned; .*job\.completed/m,
    );
    expect(run.code, run.stderr).toBe(2);
  });

  it('a token without webhooks:write (403) exits 2, as a scope refused does everywhere in svc', async () => {
    const run = await listen([], { SVC_SCOPE: 'sites:read' });
    expect(run.stderr).toContain('webhooks:write');
    expect(run.code, run.stderr).toBe(2);
  });
});
