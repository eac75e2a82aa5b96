/**
 * The example receiver as a program (`npx tsx examples/webhook-receiver/server.ts`), started the ways a
 * newcomer gets wrong: without WEBHOOK_SECRET (the README's `$(sed … listen.log)` read before svc listen was
 * Ready) and on a port already taken. Each says what to do and exits, without a stack trace. And where it
 * listens: the loopback, unless HOST says otherwise (it mostly runs on a developer's laptop).
 */
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { killAll, startNode } from '../helpers/real-processes.js';

const RECEIVER = ['--import', 'tsx', 'examples/webhook-receiver/server.ts'];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'receiver-program-'));

afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('without WEBHOOK_SECRET: says where the secret comes from, exit 2', async () => {
  const receiver = startNode(RECEIVER, { WEBHOOK_SECRET: '', RECEIVER_DATABASE: dir });
  expect(await receiver.exited).toBe(2);
  expect(receiver.output()).toBe(
    'WEBHOOK_SECRET is required: the secret of your webhook subscription, or in the sandbox the one `svc listen` ' +
      'prints on its Ready line ("Signing secret: whsec_…")\n',
  );
});

it('on a port in use: names it and what to do, exit 1', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const receiver = startNode(RECEIVER, { WEBHOOK_SECRET: 'whsec_test', PORT: String(port), RECEIVER_DATABASE: dir });
    expect(await receiver.exited).toBe(1);
    expect(receiver.output()).toBe(
      `port ${port} is in use by another process (this receiver already running?): stop it, or start this one with ` +
        'PORT set to a free port (and forward to that port)\n',
    );
  } finally {
    taken.close();
  }
}, 120_000);

/** Whether `host`:`port` can be listened on now (it cannot when the receiver holds every interface's port). */
function canListen(port: number, host: string): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** At least 16 characters, as verifyWebhook requires. */
const SECRET = 'whsec_receiver_program_test';

it('listens on 127.0.0.1 only by default; HOST picks another address', async () => {
  const port = await freePort();
  const receiver = startNode(RECEIVER, { WEBHOOK_SECRET: SECRET, PORT: String(port), RECEIVER_DATABASE: dir });
  await receiver.waitFor(/receiving webhooks/);
  expect(receiver.output()).toBe(`receiving webhooks on port ${port} of 127.0.0.1\n`);
  expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' })).status).toBe(401);
  // Another address of this machine (127.0.0.2 is one on Linux) is free on that port: not a wildcard listen.
  expect(await canListen(port, '127.0.0.2')).toBe(true);
  receiver.child.kill('SIGTERM');
  expect(await receiver.exited).toBe(0);

  const everywhere = startNode(RECEIVER, {
    WEBHOOK_SECRET: SECRET,
    PORT: String(port),
    HOST: '0.0.0.0',
    RECEIVER_DATABASE: dir,
  });
  await everywhere.waitFor(/receiving webhooks/);
  expect(everywhere.output()).toBe(`receiving webhooks on port ${port} of 0.0.0.0\n`);
  expect(await canListen(port, '127.0.0.2')).toBe(false);
  everywhere.child.kill('SIGTERM');
  expect(await everywhere.exited).toBe(0);
}, 120_000);
