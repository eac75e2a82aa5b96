/**
 * The client package against a test app: a client for a fresh tenant whose every answer from the service
 * goes through the contract check, and `svc` run as a child process (its bin, from the TypeScript sources
 * through tsx; the built and installed command is exercised by .ci/client-package.sh) with credentials in
 * its environment.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type ClientOptions, type FetchLike, type SiteServicesClient } from '@site-services/client';
import { afterEach } from 'vitest';
import { clientOpenApiDocument } from '../../src/http/openapi.js';
import type { TestApp } from './app.js';
import { ContractChecker } from './contract.js';
import type { TestTenant } from './tenants.js';

/** `node` arguments that run `svc` from its sources. */
export const SVC_NODE_ARGS = [
  '--import',
  'tsx',
  fileURLToPath(new URL('../../packages/client/src/cli/bin.ts', import.meta.url)),
];

const checkers = new WeakMap<TestApp, ContractChecker>();
/**
 * Contract violations in answers the client received. They cannot be thrown from inside the client's
 * fetch (the transport would take them for network failures, and retry or wrap them), so they are kept
 * here and fail the test that received them.
 */
const violations: Error[] = [];
afterEach(() => {
  const found = takeContractViolations();
  if (found.length > 0) throw found[0];
});

/** The violations recorded since the last test ended (for a test of the check itself). */
export function takeContractViolations(): Error[] {
  return violations.splice(0);
}

/**
 * The client's fetch with the contract check of t.http (contract.ts) on every answer of the service. A
 * Response a test made up in place of the service's (no `url`) is not the service's and is not checked.
 */
export function contractCheckedFetch(t: TestApp, inner: FetchLike = (request) => fetch(request)): FetchLike {
  let checker = checkers.get(t);
  if (!checker) {
    checker = new ContractChecker(clientOpenApiDocument(t.app));
    checkers.set(t, checker);
  }
  return async (request) => {
    const url = new URL(request.url);
    const response = await inner(request);
    if (response.url === '') return response;
    const text = await response.clone().text();
    const contentType = response.headers.get('content-type') ?? '';
    let body: unknown = text;
    if (/json/.test(contentType) && text.length > 0) body = JSON.parse(text);
    try {
      checker.check(request.method, `${url.pathname}${url.search}`, {
        status: response.status,
        headers: response.headers,
        body,
        text,
        contentType,
      });
    } catch (error) {
      violations.push(error as Error);
    }
    return response;
  };
}

/**
 * A client for the tenant, its answers contract-checked; retries wait 1-10 ms so tests do not sleep for
 * real.
 */
export function clientFor(
  t: TestApp,
  tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>,
  options: Partial<ClientOptions> = {},
): SiteServicesClient {
  return createClient({
    baseUrl: t.baseUrl,
    clientId: tenant.clientId,
    clientSecret: tenant.clientSecret,
    ...options,
    fetch: contractCheckedFetch(t, options.fetch),
    retry: { baseDelayMs: 2, maxDelayMs: 10, ...options.retry },
  });
}

/** One state directory for the svc processes of this test process (`svcEnv`). */
const SVC_STATE_HOME = path.join(os.tmpdir(), `svc-test-state-${process.pid}`);

export function svcEnv(
  t: TestApp,
  tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // svc listen remembers its listener here, not in the home directory of whoever runs the tests.
    XDG_STATE_HOME: SVC_STATE_HOME,
    SVC_BASE_URL: t.baseUrl,
    SVC_CLIENT_ID: tenant.clientId,
    SVC_CLIENT_SECRET: tenant.clientSecret,
    ...extra,
  };
}

export interface SvcRun {
  child: ChildProcess;
  /** Resolves when the process ends: its exit code (null when killed) and output. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

export function runSvc(args: string[], env: NodeJS.ProcessEnv, cwd?: string): SvcRun {
  const child = spawn(process.execPath, [...SVC_NODE_ARGS, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    },
  );
  return { child, done };
}

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: import('node:http').IncomingHttpHeaders;
  body: Buffer;
  /** What the service answered (also when the answer was then dropped). */
  status: number;
  dropped: boolean;
}

export interface DroppingProxy {
  baseUrl: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the test app that forwards each request, waits for the service's whole
 * answer, and then, when `drop` says so, cuts the client's connection instead of passing the answer on:
 * the write happened, the client never learns it.
 */
export async function startDroppingProxy(
  target: string,
  drop: (request: { method: string; path: string }, index: number) => boolean,
): Promise<DroppingProxy> {
  const { createServer } = await import('node:http');
  const requests: ProxiedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
      const answer = await fetch(`${target}${request.url}`, {
        method: request.method!,
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const answerBody = Buffer.from(await answer.arrayBuffer());
      const entry = {
        method: request.method!,
        path: request.url!,
        headers: request.headers,
        body,
        status: answer.status,
        dropped: false,
      };
      entry.dropped = drop(entry, requests.length);
      requests.push(entry);
      if (entry.dropped) {
        request.socket.destroy();
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection' && name !== 'keep-alive')
          out[name] = value;
      });
      response.writeHead(answer.status, out).end(answerBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as import('node:net').AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
