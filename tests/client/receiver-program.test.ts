/**
 * The example receiver as a program (`npx tsx examples/webhook-receiver/server.ts`), started the ways a
 * newcomer gets wrong: without WEBHOOK_SECRET (the README's `$(sed … listen.log)` read before svc listen was
 * Ready) and on a port already taken. Each says what to do and exits, without a stack trace.
 */
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
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
