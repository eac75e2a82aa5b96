/**
 * `svc listen` end to end through real processes (issue 18): the server (on PostgreSQL as two API
 * processes, WEB_CONCURRENCY=2 ROLE=api, plus a ROLE=worker process, so that the stream, the claim and
 * the report cross processes; on PGlite one process), `svc listen` and `svc trigger` as commands, and a
 * receiver on plain HTTP that checks every delivery with verifyWebhook and the secret svc listen printed.
 *
 * A receiver answering 500 gets attempt 2 (shown by svc listen and by the operator's delivery record);
 * another tenant's events never arrive; svc listen killed and started again within the grace resumes the
 * same listener (same secret, the missed event delivered); killed for longer than the grace, its pending
 * delivery fails terminally ("listener closed"); Ctrl-C closes the listener, and the next svc listen opens a
 * new one with the same signing secret (kept per client id, whatever the service's address) until --new-secret
 * makes another.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { verifyWebhook } from '@site-services/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { SVC_NODE_ARGS } from '../helpers/client.js';
import { HttpClient } from '../helpers/http.js';
import { killAll, type RealProcess, startNode, startServer, until } from '../helpers/real-processes.js';
import { admin, type Operator } from '../helpers/tenants.js';
import { createVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';

const ADMIN_TOKEN = `adm_${randomUUID()}`;
const GRACE_SECONDS = 15;
const databaseUrl = inject('databaseUrl');

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-listen-'));
let empty: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;
let op: Operator;
let baseUrl: string;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver answers, per request (its index among all requests). */
let respond: (request: Received, index: number) => number = () => 200;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) };
      received.push(entry);
      response.writeHead(respond(entry, received.length - 1)).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://localhost:${(receiver.address() as { port: number }).port}`;

  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const common: Record<string, string> = {
    ADMIN_TOKEN,
    DATA_DIR: path.join(directory, 'data'),
    RATE_LIMIT_PER_MINUTE: '1000000',
    // Attempt 2 one second after attempt 1, then a long wait: what a stream that is back delivers at once.
    WEBHOOK_RETRY_SCHEDULE: '1s,60s',
    WEBHOOK_LISTENER_GRACE: `${GRACE_SECONDS}s`,
    LOG_LEVEL: 'warn',
  };
  if (databaseUrl) {
    empty = await openEmptyDatabase('ss_listen');
    common.DATABASE_URL = empty.url!;
    startNode(['--import', 'tsx', 'src/server.ts'], { ...common, ROLE: 'worker' });
    await startServer({ ...common, PORT: String(port), ROLE: 'api', WEB_CONCURRENCY: '2' }, baseUrl);
  } else {
    await startServer({ ...common, PORT: String(port) }, baseUrl);
  }
  op = { http: new HttpClient(baseUrl), adminToken: ADMIN_TOKEN };
}, 300_000);

afterAll(async () => {
  killAll();
  await new Promise((resolve) => receiver?.close(resolve));
  await empty?.drop();
  fs.rmSync(directory, { recursive: true, force: true });
});

async function tenant(): Promise<VisitTenant> {
  const v = await visitTenant(op);
  const patched = await admin(op, 'PATCH', `/admin/v1/tenants/${v.tenantId}`, { webhookAccess: true });
  expect(patched.status, patched.text).toBe(200);
  return v;
}

function svc(v: VisitTenant, args: string[], serviceUrl = baseUrl): RealProcess {
  return startNode([...SVC_NODE_ARGS, ...args], {
    SVC_BASE_URL: serviceUrl,
    SVC_CLIENT_ID: v.clientId,
    SVC_CLIENT_SECRET: v.clientSecret,
    // Where svc listen remembers its listener (to resume after a kill): $XDG_STATE_HOME/svc.
    XDG_STATE_HOME: directory,
  });
}

async function listen(v: VisitTenant, path: string, ...options: string[]) {
  return listenAt(baseUrl, v, path, ...options);
}

async function listenAt(serviceUrl: string, v: VisitTenant, path: string, ...options: string[]) {
  const command = svc(v, ['listen', '--forward-to', `${receiverUrl}${path}`, ...options], serviceUrl);
  const [line, secret] = await command.waitFor(/^Ready\. Forwarding events to (?:\S+)\. Signing secret: (\S+)$/m);
  expect(command.stdout().split('\n')[0]).toBe(line);
  return { command, secret: secret! };
}

/** The events that reached `path`, each verified with `secret` as the example receiver does. */
function verifiedAt(path: string, secret: string) {
  return received
    .filter((entry) => entry.path === path)
    .map((entry) => ({
      event: verifyWebhook({ headers: entry.headers, rawBody: entry.body, secret }),
      attempt: Number(entry.headers['x-svc-attempt']),
    }));
}

async function deliveriesOf(tenantId: string) {
  const response = await admin(op, 'GET', `/admin/v1/deliveries?tenantId=${tenantId}`);
  expect(response.status).toBe(200);
  return response.body.data as any[];
}

describe('svc listen through real processes', { timeout: 240_000 }, () => {
  let a: VisitTenant;
  let b: VisitTenant;
  let listenA: Awaited<ReturnType<typeof listen>>;
  let listenB: Awaited<ReturnType<typeof listen>>;

  it('forwards real deliveries signed with the printed secret; a receiver answering 500 gets attempt 2', async () => {
    [a, b] = [await tenant(), await tenant()];
    listenA = await listen(a, '/a');
    listenB = await listen(b, '/b');
    expect(listenA.secret).not.toBe(listenB.secret);
    respond = (_request, index) => (index === 0 ? 500 : 200);
    await createVisit(op, a);
    await until(() => verifiedAt('/a', listenA.secret).length === 2, 'attempt 2');
    const [first, second] = verifiedAt('/a', listenA.secret);
    expect(first!.event.type).toBe('ticket.created');
    expect(second!.event.id).toBe(first!.event.id);
    expect([first!.attempt, second!.attempt]).toEqual([1, 2]);
    const eventId = first!.event.id;
    // WEBHOOK_RETRY_SCHEDULE is 1s,60s: the service says the retry comes in about a second.
    await listenA.command.waitFor(
      new RegExp(`ticket\\.created  ${eventId}  attempt 1  500  \\d+ ms  retried in about 1 s\n`),
    );
    await listenA.command.waitFor(new RegExp(`ticket\\.created  ${eventId}  attempt 2  200  \\d+ ms`));
    await until(async () => (await deliveriesOf(a.tenantId))[0]?.status === 'succeeded', 'the delivery record');
    const [record] = await deliveriesOf(a.tenantId);
    expect(record).toMatchObject({ eventId, targetKind: 'listener', status: 'succeeded', attempts: 2 });
    expect(record.attemptLog.map((entry: any) => entry.statusCode)).toEqual([500, 200]);
  });

  it("runs the simulator with svc trigger; another tenant's events never arrive", async () => {
    respond = () => 200;
    const visitA = await createVisit(op, a);
    await createVisit(op, b);
    const trigger = svc(a, ['trigger', visitA.id, 'complete-lifecycle']);
    expect(await trigger.exited).toBe(0);
    const triggered = [...trigger.stdout().matchAll(/^ {2}(\S+) (evt_\S+)$/gm)].map((match) => match[2]!);
    expect(triggered).toHaveLength(6);
    await until(
      () => triggered.every((id) => verifiedAt('/a', listenA.secret).some(({ event }) => event.id === id)),
      'the simulated events at the receiver',
    );
    await until(() => verifiedAt('/b', listenB.secret).length >= 1, "b's own event");
    const bEvents = verifiedAt('/b', listenB.secret).map(({ event }) => event.id);
    const aEvents = new Set(verifiedAt('/a', listenA.secret).map(({ event }) => event.id));
    for (const id of verifiedAt('/b', listenB.secret).map(({ event }) => event.id)) expect(aEvents.has(id)).toBe(false);
    for (const id of triggered) expect(bEvents).not.toContain(id);
    expect(listenB.command.stdout()).not.toMatch(/rep\.assigned/);
  });

  it('resumes the same listener when svc listen is killed and started again within the grace', async () => {
    // Remembered where only this user can read it.
    const stateDirectory = path.join(directory, 'svc');
    expect(fs.statSync(stateDirectory).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(stateDirectory);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(fs.statSync(path.join(stateDirectory, file)).mode & 0o777).toBe(0o600);
    listenA.command.child.kill('SIGKILL');
    await listenA.command.exited;
    const before = verifiedAt('/a', listenA.secret).length;
    await createVisit(op, a);
    await until(
      async () =>
        (await deliveriesOf(a.tenantId)).some(
          (d) =>
            d.status === 'pending' &&
            d.attemptLog.some((entry: any) => /not connected|closed before/.test(entry.error)),
        ),
      'an attempt while svc listen is away',
    );
    const again = await listen(a, '/a');
    const { secret } = listenA;
    listenA = again;
    expect(again.secret).toBe(secret);
    expect(again.command.output()).toMatch(
      /svc listen: resuming listener whl_\w+ \(the same signing secret as before\)/,
    );
    await until(() => verifiedAt('/a', secret).length === before + 1, 'the missed event, once back');
    const missed = verifiedAt('/a', secret).at(-1)!;
    expect(missed.event.type).toBe('ticket.created');
    expect(missed.attempt).toBeGreaterThanOrEqual(2);
  });

  it('after the grace, the pending delivery fails terminally ("listener closed"); Ctrl-C closes a listener', async () => {
    listenA.command.child.kill('SIGKILL');
    await listenA.command.exited;
    await createVisit(op, a);
    const failed = async () =>
      (await deliveriesOf(a.tenantId)).find((d) => d.status === 'failed' && d.lastError === 'listener closed');
    await until(async () => (await failed()) !== undefined, 'the delivery failing after the grace', 60_000);
    // Started again, it opens a new listener (the old one is gone), with the same signing secret.
    const fresh = await listen(a, '/a');
    expect(fresh.secret).toBe(listenA.secret);

    fresh.command.child.kill('SIGINT');
    expect(await fresh.command.exited).toBe(0);
    expect(fresh.command.output()).toMatch(
      /listener closed; the next svc listen opens a new one, with the same signing secret/,
    );
  });

  it('after Ctrl-C the next svc listen prints and signs with the same secret; --new-secret makes and keeps a new one', async () => {
    const kept = listenA.secret;
    const next = await listen(a, '/a');
    expect(next.secret).toBe(kept);
    expect(next.command.output()).not.toMatch(/resuming/);
    const before = verifiedAt('/a', kept).length;
    await createVisit(op, a);
    await until(() => verifiedAt('/a', kept).length === before + 1, 'an event signed with the kept secret');
    next.command.child.kill('SIGINT');
    expect(await next.command.exited).toBe(0);

    // The secret file: only this user's, and only the secret.
    const secretFiles = fs
      .readdirSync(path.join(directory, 'svc'))
      .filter((file) => file.startsWith('signing-secret-'));
    expect(secretFiles).toHaveLength(2);
    for (const file of secretFiles) expect(fs.statSync(path.join(directory, 'svc', file)).mode & 0o777).toBe(0o600);

    const rotated = await listen(a, '/a-rotated', '--new-secret');
    expect(rotated.secret).not.toBe(kept);
    expect(rotated.secret).toMatch(/^whsec_[\w-]{43}$/);
    expect(rotated.command.output()).toMatch(/made a new signing secret/);
    await createVisit(op, a);
    await until(() => verifiedAt('/a-rotated', rotated.secret).length === 1, 'an event signed with the new secret');
    rotated.command.child.kill('SIGINT');
    expect(await rotated.command.exited).toBe(0);

    // Kept: the next run, on any address, has the new one.
    const after = await listen(a, '/a-after');
    expect(after.secret).toBe(rotated.secret);
    after.command.child.kill('SIGINT');
    expect(await after.command.exited).toBe(0);

    // The same sandbox at another address (a restart on another port gives the packet a new baseUrl; here
    // localhost for 127.0.0.1): the same secret, which the developer's receiver has.
    const elsewhere = await listenAt(baseUrl.replace('127.0.0.1', 'localhost'), a, '/a-elsewhere');
    expect(elsewhere.secret).toBe(rotated.secret);
    await createVisit(op, a);
    await until(() => verifiedAt('/a-elsewhere', rotated.secret).length === 1, 'an event signed with the kept secret');
    elsewhere.command.child.kill('SIGINT');
    expect(await elsewhere.command.exited).toBe(0);
    listenB.command.child.kill('SIGINT');
    expect(await listenB.command.exited).toBe(0);
  });
});
