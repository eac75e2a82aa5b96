/**
 * `svc listen` follows its credential packet when the sandbox is restarted on another port: the sandbox rewrites the
 * packet's baseUrl, and a running `svc listen` (SVC_CREDENTIALS_FILE) used to go on trying the address it started
 * with for as long as it ran. It now reads the packet again before each attempt to reconnect, says in one line that
 * it moved, and resumes the same listener there (same signing secret): an event recorded after the restart reaches
 * the receiver. Through real processes: the sandbox (stopped with SIGTERM, started again on another port with the
 * same DATA_DIR and database), `svc listen` and `svc token` as commands, a plain HTTP receiver.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { SVC_NODE_ARGS } from '../helpers/client.js';
import { killAll, ROOT, startNode, startServer, until } from '../helpers/real-processes.js';

const databaseUrl = inject('databaseUrl');
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-listen-moved-'));
const packetFile = path.join(directory, 'data', 'credentials.json');
let empty: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;
let receiver: Server;
let receiverUrl: string;
const received: IncomingHttpHeaders[] = [];
const common: Record<string, string> = {
  DATA_DIR: path.join(directory, 'data'),
  RATE_LIMIT_PER_MINUTE: '1000000',
  LOG_LEVEL: 'warn',
  // Longer than a restart takes on a loaded machine: the listener must still be there to resume.
  WEBHOOK_LISTENER_GRACE: '300s',
};

beforeAll(async () => {
  receiver = createServer((request, response) => {
    received.push(request.headers);
    request.resume().on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks`;
  if (databaseUrl) {
    empty = await openEmptyDatabase('ss_listen_moved');
    common.DATABASE_URL = empty.url!;
  }
}, 120_000);

afterAll(async () => {
  killAll();
  await new Promise((resolve) => receiver?.close(resolve));
  await empty?.drop();
  fs.rmSync(directory, { recursive: true, force: true });
});

async function sandboxOn(port: number) {
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await startServer({ ...common, PORT: String(port) }, baseUrl);
  await until(() => fs.existsSync(packetFile), 'the credential packet');
  return { server, baseUrl };
}

const svc = (args: string[]) =>
  startNode([...SVC_NODE_ARGS, ...args], { SVC_CREDENTIALS_FILE: packetFile, XDG_STATE_HOME: directory });

it('reconnects to the address a restarted sandbox wrote into the packet, saying so, and resumes its listener', async () => {
  const first = await sandboxOn(await freePort());
  const listen = svc(['listen', '--forward-to', receiverUrl]);
  const [, secret] = await listen.waitFor(/^Ready\. Forwarding events to \S+\. Signing secret: (\S+)$/m);

  first.server.child.kill('SIGTERM');
  await first.server.exited;
  const old = first.baseUrl.replaceAll('.', '\\.');
  // It tries the address it has, which is gone, and says which.
  await listen.waitFor(new RegExp(`^svc listen: could not open the stream of listener \\S+ at ${old} `, 'm'));

  const second = await sandboxOn(await freePort());
  expect(JSON.parse(fs.readFileSync(packetFile, 'utf8')).baseUrl).toBe(second.baseUrl);
  const moved = `svc listen: the credential packet's baseUrl is now ${second.baseUrl} (was ${first.baseUrl}); connecting there`;
  await listen.waitFor(/^svc listen: reconnected; resuming$/m);
  expect(
    listen
      .output()
      .split('\n')
      .filter((line) => line.includes('credential packet')),
  ).toEqual([moved]);
  expect(listen.output()).not.toMatch(/Opened a new listener/);

  // An event recorded now reaches the receiver through the new address, signed with the same secret's listener.
  const token = svc(['token']);
  expect(await token.exited).toBe(0);
  const created = await fetch(`${second.baseUrl}/api/v1/site-visits`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.stdout().trim()}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: fs.readFileSync(path.join(ROOT, 'examples', 'first-visit.json')),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  await listen.waitFor(/ticket\.created {2}evt_\S+ {2}attempt 1 {2}204 {2}\d+ ms$/m);
  expect(received.some((headers) => headers['x-svc-event-type'] === 'ticket.created')).toBe(true);
  expect(listen.stdout().split('\n')[0]).toBe(`Ready. Forwarding events to ${receiverUrl}. Signing secret: ${secret}`);
}, 300_000);
