/**
 * The client README's "Receiving webhooks" receiver, run as written: its js block, read from
 * packages/client/README.md (the block after its `<!-- example: webhook receiver` marker), in a node process of
 * its own with the client package from its sources, pasted whole (its own in-memory `saveOnce`), given PORT.
 * The real app delivers to it through a sandbox listener (`svc listen`'s runListen, in this process, forwarding
 * to the receiver's plain-HTTP address): a genuine delivery is answered 2xx and
 * stored; the same event delivered again (a second listener's delivery, replayed) is answered 2xx and not
 * stored again; a tampered body, or the genuine delivery to the receiver started with another secret, is
 * refused (401) and stores nothing.
 */
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { runListen } from '../../packages/client/src/cli/listen/listen.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor } from '../helpers/client.js';
import { clientReadmeExample } from '../helpers/readme-shell.js';
import { killAll, type RealProcess, ROOT, startNode, until } from '../helpers/real-processes.js';
import { tenantWithToken } from '../helpers/tenants.js';
import { localResolver, recordTicketCreated, startTestWorker, testWebhookConfig } from '../helpers/webhooks.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';

interface Captured {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'client-readme-receiver-'));
let t: TestApp;
let worker: DeliveryWorker;
let capture: Server;
const captured: Captured[] = [];
const stops: AbortController[] = [];
const runs: Promise<number>[] = [];

/** The README's receiver, started with `secret`, listening (it prints nothing until a delivery). */
async function startReceiver(secret: string): Promise<{ process: RealProcess; url: string }> {
  const port = await freePort();
  const child = startNode(
    ['--conditions=@site-services/source', '--import', 'tsx', path.join(directory, 'receiver.mjs')],
    { PORT: String(port), WEBHOOK_SECRET: secret },
  );
  const url = `http://127.0.0.1:${port}/webhooks`;
  await until(async () => {
    if (child.child.exitCode !== null) throw new Error(`the receiver exited:\n${child.output()}`);
    return (await fetch(url, { method: 'GET' }).catch(() => undefined)) !== undefined;
  }, 'the README receiver listening');
  return { process: child, url };
}

/** svc listen (runListen) for the tenant, forwarding to `forwardTo`; resolves with its Ready line's secret. */
function listen(tenant: Awaited<ReturnType<typeof tenantWithToken>>, forwardTo: string): Promise<string> {
  const stop = new AbortController();
  stops.push(stop);
  return new Promise<string>((resolve, reject) => {
    const notes: string[] = [];
    const run = runListen(
      { forwardTo },
      {
        client: clientFor(t, tenant),
        baseUrl: t.baseUrl,
        clientId: tenant.clientId,
        out: (line) => {
          const ready = /^Ready\. .* Signing secret: (\S+)$/.exec(line);
          if (ready) resolve(ready[1]!);
        },
        note: (line) => notes.push(line),
        stateDirectory: directory,
      },
      stop.signal,
    );
    runs.push(run);
    void run.then((code) => reject(new Error(`svc listen exited ${code}:\n${notes.join('\n')}`)));
  });
}

async function post(url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<number> {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && (name.startsWith('x-svc-') || name === 'content-type')) forwarded[name] = value;
  }
  const response = await fetch(url, { method: 'POST', headers: forwarded, body });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  fs.writeFileSync(
    path.join(directory, 'receiver.mjs'),
    clientReadmeExample('### Receiving webhooks', '<!-- example: webhook receiver'),
  );
  // The example imports '@site-services/client' as an integrator's project does: from its node_modules.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(directory, 'node_modules'), 'dir');

  capture = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      captured.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));

  t = await startTestApp({ resolver: localResolver, config: { webhook: testWebhookConfig(0) } });
  worker = await startTestWorker(t, { caPem: '' });
}, 240_000);

afterAll(async () => {
  for (const stop of stops) stop.abort();
  await Promise.allSettled(runs);
  killAll();
  await worker?.stop();
  await t?.close();
  if (capture) {
    capture.closeAllConnections();
    await new Promise((resolve) => capture.close(resolve));
  }
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('client README: the webhook receiver example, as written', () => {
  it('stores a genuine delivery once although it arrives twice, and refuses a tampered body or another secret', async () => {
    const tenant = await tenantWithToken(t, { webhookAccess: true });
    // The signing secret svc listen keeps for this client: every listener it opens signs with it.
    const captureUrl = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/captured`;
    const secret = await listen(tenant, captureUrl);
    const receiver = await startReceiver(secret);
    expect(await listen(tenant, receiver.url)).toBe(secret);

    const { id: eventId } = (await recordTicketCreated(t, tenant.tenantId)) as { id: string };
    const storedLines = () =>
      receiver.process
        .output()
        .split('\n')
        .filter((line) => line === `stored ticket.created ${eventId}`);
    // Delivered to both listeners: the receiver's delivery answered 2xx (svc listen's record) and stored.
    await until(() => storedLines().length === 1, 'the receiver storing the event');
    await until(() => captured.some((entry) => entry.headers['x-svc-event-id'] === eventId), 'the second delivery');
    const genuine = captured.find((entry) => entry.headers['x-svc-event-id'] === eventId)!;

    // The same event again (the other listener's delivery): 2xx, not stored again.
    expect(await post(receiver.url, genuine.headers, genuine.body)).toBe(204);
    expect(storedLines()).toHaveLength(1);

    // A changed body: refused, nothing stored.
    const tampered = Buffer.from(genuine.body.toString().replace(eventId, `${eventId}x`));
    expect(tampered.equals(genuine.body)).toBe(false);
    expect(await post(receiver.url, genuine.headers, tampered)).toBe(401);
    expect(receiver.process.output()).toMatch(/^refused: /m);
    expect(receiver.process.output()).not.toContain(`${eventId}x`);

    // The genuine delivery to the receiver configured with another secret: refused.
    const wrong = await startReceiver('whsec_not-the-listeners-secret');
    expect(await post(wrong.url, genuine.headers, genuine.body)).toBe(401);
    expect(wrong.process.output()).toMatch(/^refused: /m);
    expect(wrong.process.output()).not.toMatch(/^stored /m);
    expect(storedLines()).toHaveLength(1);
  });
});
