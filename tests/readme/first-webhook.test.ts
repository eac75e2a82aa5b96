/**
 * README "Receive your first webhook", run as written (issue 18): its commands, read from the README itself,
 * in one bash session in a copy of the checkout (tests/helpers/readme-shell.ts), through real processes:
 * `npm start`, `npx svc listen`, the example receiver (which verifies every delivery with verifyWebhook and the
 * secret svc listen printed), curl creating a visit, `npx svc trigger`. Between commands the test waits for
 * what a reader waits for (the credential packet, the Ready line, the receiver's start). Only `git clone` and
 * `npm install` are not run: the checkout is the clone, and it is installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openReadmeShell, type ReadmeShell, readmeBlock } from '../helpers/readme-shell.js';

const NOT_RUN = [/^git clone /, /^npm install\b/];

let shell: ReadmeShell;
beforeAll(async () => {
  shell = await openReadmeShell('first-webhook');
}, 120_000);
afterAll(async () => shell?.close());

describe('README: Receive your first webhook', () => {
  it('takes a fresh checkout to events verified by the example receiver, in at most ten commands', async () => {
    // The section's commands, continuation lines joined.
    const commands = readmeBlock('<!-- first-webhook:')
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(commands.length).toBeLessThanOrEqual(10);

    for (const command of commands) {
      if (NOT_RUN.some((pattern) => pattern.test(command))) continue;
      await shell.run(command);
      // What a reader waits for before the next command.
      if (/^npm start/.test(command)) await shell.sandboxStarted();
      else if (/svc listen/.test(command))
        await shell.until(() => /^Ready\./m.test(shell.read('listen.log')), "svc listen's Ready line");
      else if (/webhook-receiver/.test(command))
        await shell.until(() => shell.output().includes('receiving webhooks on port'), "the receiver's start");
    }

    const ready = shell.read('listen.log').split('\n')[0]!;
    expect(ready).toMatch(
      new RegExp(
        `^Ready\\. Forwarding events to http://localhost:${shell.receiverPort}/webhooks\\. Signing secret: whsec_\\S+$`,
      ),
    );
    const output = () => shell.output();
    const triggered = [...output().matchAll(/^ {2}(\S+) (evt_\S+)$/gm)].map((match) => `${match[1]} ${match[2]}`);
    expect(triggered).toHaveLength(6);
    // The example receiver stores an event only once verifyWebhook accepted it.
    await shell.until(
      () =>
        triggered.every((event) => output().includes(`stored ${event}`)) &&
        /stored ticket\.created evt_/.test(output()),
      'the receiver storing every event',
    );
    expect(output()).not.toMatch(/refused delivery/);
    // svc listen logs an attempt once the receiver's answer is back, a moment after the receiver stored it.
    const logged = [
      /ticket\.created {2}evt_\S+ {2}attempt 1 {2}200 {2}\d+ ms/,
      ...triggered.map((event) => {
        const [type, id] = event.split(' ');
        return new RegExp(`${type!.replace('.', '\\.')} {2}${id} {2}attempt 1 {2}200 {2}\\d+ ms`);
      }),
    ];
    await shell.until(
      () => logged.every((line) => line.test(shell.read('listen.log'))),
      'svc listen logging every event at its first attempt, answered 200',
    );
  }, 420_000);
});
