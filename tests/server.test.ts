/**
 * The real server as `npm start` runs it: a child process on an embedded database in a fresh DATA_DIR.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib/processes.js';

const root = path.resolve(import.meta.dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServer(port: number): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  // Generous: a first start initialises the embedded database, which takes long on a busy machine.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${baseUrl}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, baseUrl, output: () => output, exited };
}

/** Polls `condition` every 20 ms for up to 10 seconds. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A POST whose body is sent in two parts, the second only when `release` is called. */
function slowPost(
  url: string,
  body: string,
): { release: () => void; response: Promise<{ status: number; body: string }> } {
  const bytes = Buffer.from(body);
  let release!: () => void;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': bytes.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    request.on('error', reject);
    request.write(bytes.subarray(0, 10));
    release = () => request.end(bytes.subarray(10));
  });
  return { release, response };
}

describe('npm start', () => {
  it('first start: prints the credential packet and operator token, writes them (0600), serves, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const server = await startServer(port);

    // The packet, printed once, and the same as credentials.json.
    const printed = /\{\n\s+"baseUrl"[\s\S]*?\n\}/.exec(server.output());
    expect(printed, server.output()).not.toBeNull();
    const packet = JSON.parse(printed![0]);
    const file = path.join(dataDir, 'credentials.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(packet);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(packet).toMatchObject({
      baseUrl: server.baseUrl,
      siteCode: 'DEMO-001',
      projectId: 1001,
      itemName: 'Demo Kiosk',
    });
    expect(server.output().split(packet.client_secret).length - 1).toBe(1);

    const adminFile = path.join(dataDir, 'admin-token');
    const adminToken = fs.readFileSync(adminFile, 'utf8').trim();
    expect(fs.statSync(adminFile).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain(adminToken);

    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/ready`)).status).toBe(200);
    expect(
      (await fetch(`${server.baseUrl}/admin/v1/tenants`, { headers: { authorization: `Bearer ${adminToken}` } }))
        .status,
    ).toBe(200);

    // A token request is in flight (half its body sent) when SIGTERM arrives: it still completes.
    const body = JSON.stringify({
      grant_type: 'client_credentials',
      client_id: packet.client_id,
      client_secret: packet.client_secret,
    });
    const inFlight = slowPost(`${server.baseUrl}/api/v1/oauth/token`, body);
    await until(() =>
      /"msg":"incoming request"[^\n]*oauth\/token|oauth\/token[^\n]*"msg":"incoming request"/.test(server.output()),
    );
    server.child.kill('SIGTERM');
    // It stops accepting new connections...
    await until(async () =>
      fetch(`${server.baseUrl}/health`).then(
        () => false,
        () => true,
      ),
    );
    // ...while the request in flight completes.
    inFlight.release();
    const answered = await inFlight.response;
    expect(answered.status, answered.body).toBe(200);
    const accessToken = JSON.parse(answered.body).access_token as string;
    expect(accessToken).toEqual(expect.any(String));
    expect(await server.exited).toBe(0);

    // Logs are JSON lines with request ids, never a token or a client secret beyond the one-time packet.
    const logLines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{"level"'));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.some((line) => /"requestId":"[^"]+"/.test(line))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toContain(accessToken);
      expect(line).not.toContain(packet.client_secret);
      expect(line).not.toContain(adminToken);
      expect(line.toLowerCase()).not.toContain('authorization');
    }
  }, 120_000);
});
