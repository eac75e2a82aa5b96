/**
 * The client package against a test app: a client for a fresh tenant, and `svc` run as a child process
 * (the real bin shim, as an integrator runs it) with credentials in its environment.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, type ClientOptions, type SiteServicesClient } from '@site-services/client';
import type { TestApp } from './app.js';
import type { TestTenant } from './tenants.js';

export const SVC_BIN = fileURLToPath(new URL('../../packages/client/bin/svc.js', import.meta.url));

/** A client for the tenant; retries wait 1-10 ms so tests do not sleep for real. */
export function clientFor(t: TestApp, tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>, options: Partial<ClientOptions> = {}): SiteServicesClient {
  return createClient({
    baseUrl: t.baseUrl,
    clientId: tenant.clientId,
    clientSecret: tenant.clientSecret,
    ...options,
    retry: { baseDelayMs: 2, maxDelayMs: 10, ...options.retry },
  });
}

export function svcEnv(t: TestApp, tenant: Pick<TestTenant, 'clientId' | 'clientSecret'>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
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
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}
