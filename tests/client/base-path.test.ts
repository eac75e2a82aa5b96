/**
 * A base address with a path prefix (`http://host/ss`, the service behind a proxy that mounts it there):
 * the typed calls, `getRaw`, `svc get` and `svc listen`'s stream (a WebSocket upgrade) all keep the
 * prefix. The proxy strips `/ss` and answers 404 to anything without it, recording what it saw.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runListen } from '../../packages/client/src/cli/listen/listen.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { clientFor, svcEnv } from '../helpers/client.js';
import { createTenant } from '../helpers/tenants.js';
import { runSvcInProcess } from './svc-in-process.js';

const PREFIX = '/ss';
let t: TestApp;
let proxy: Server;
let prefixed: string;
/** Every request the proxy received: method and path as sent, and whether it had the prefix. */
const seen: { method: string; path: string; upgrade: boolean }[] = [];

function unprefixed(request: IncomingMessage, upgrade: boolean): string | undefined {
  const path = request.url ?? '';
  seen.push({ method: request.method ?? '', path, upgrade });
  return path.startsWith(`${PREFIX}/`) ? path.slice(PREFIX.length) : undefined;
}

beforeAll(async () => {
  t = await startTestApp();
  const target = new URL(t.baseUrl);
  proxy = createServer(async (request, response) => {
    const path = unprefixed(request, false);
    if (path === undefined) return void response.writeHead(404).end('not under /ss');
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    const body = Buffer.concat(chunks);
    const answer = await fetch(`${t.baseUrl}${path}`, {
      method: request.method!,
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(name))
        out[name] = value;
    });
    response.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
  });
  // A WebSocket upgrade: the request head passed on with the prefix stripped, then bytes both ways.
  proxy.on('upgrade', (request: IncomingMessage, socket, head: Buffer) => {
    const path = unprefixed(request, true);
    if (path === undefined) return void socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${request.method} ${path} HTTP/1.1`];
      for (let index = 0; index < request.rawHeaders.length; index += 2)
        lines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  prefixed = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${PREFIX}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await t?.close();
});

const outside = () => seen.filter((entry) => !entry.path.startsWith(`${PREFIX}/`));

it('typed calls, getRaw and svc get keep the prefix of the base address', async () => {
  const tenant = await createTenant(t);
  const client = clientFor({ ...t, baseUrl: `${prefixed}/` }, tenant);
  expect(await client.sites.findBySiteCode('none')).toBeUndefined();
  const raw = await client.getRaw('/api/v1/sites?page[size]=1');
  expect(raw.status).toBe(200);
  expect(raw.body).toMatchObject({ data: [], meta: { pageSize: 1 } });

  const get = await runSvcInProcess(t, ['get', 'sites?page[size]=2'], svcEnv(t, tenant, { SVC_BASE_URL: prefixed }));
  expect(get.code, get.stderr).toBe(0);
  expect(JSON.parse(get.stdout)).toMatchObject({ data: [], meta: { pageSize: 2 } });
  expect(outside()).toEqual([]);
  expect(seen.map((entry) => `${entry.method} ${entry.path}`)).toContain('GET /ss/api/v1/sites?page[size]=1');
});

it('svc listen opens its listener and its stream under the prefix, and closes it there on stop', async () => {
  const tenant = await createTenant(t, { webhookAccess: true });
  const stop = new AbortController();
  const lines: string[] = [];
  const notes: string[] = [];
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const out = (line: string) => {
    lines.push(line);
    if (line.startsWith('Ready.')) onReady();
  };
  const client = clientFor({ ...t, baseUrl: prefixed }, tenant);
  const stateDirectory = mkdtempSync(path.join(os.tmpdir(), 'base-path-listen-'));
  const deps = {
    client,
    baseUrl: prefixed,
    clientId: tenant.clientId,
    out,
    note: (line: string) => notes.push(line),
    stateDirectory,
  };
  const exited = runListen({ forwardTo: 'http://127.0.0.1:9/hooks' }, deps, stop.signal);
  // Ready, or given up on (a stream that never opens is retried until the listener's grace runs out).
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ready, exited, new Promise((resolve) => (timer = setTimeout(resolve, 15_000)))]);
  clearTimeout(timer);
  stop.abort();
  expect(await exited, notes.join('\n')).toBe(0);
  rmSync(stateDirectory, { recursive: true, force: true });
  expect(lines[0], notes.join('\n')).toMatch(/^Ready\. Forwarding events to http:\/\/127\.0\.0\.1:9\/hooks\./);
  expect(notes).toContain(
    'svc listen: listener closed; the next svc listen opens a new one, with the same signing secret',
  );
  expect(outside()).toEqual([]);
  expect(seen.filter((entry) => entry.upgrade).map((entry) => entry.path)).toEqual([
    expect.stringMatching(/^\/ss\/api\/v1\/sandbox\/webhook-listeners\/\S+\/stream$/),
  ]);
});
