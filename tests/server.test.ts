/**
 * The real server as `npm start` runs it: the compiled build (`node dist/server.js`, rebuilt first when a
 * source is newer) as a child process on an embedded database in a fresh DATA_DIR, then restarted on it;
 * on PostgreSQL (TEST_DATABASE_URL) also against a database of its own. No step has a deadline of its own
 * (a loaded machine may take long to start a process): each waits for what it needs, and only the test's
 * timeout ends a start that never comes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../bench/lib/processes.js';
import { TEMPLATE_DIR } from '../src/db/embedded.js';
import { openEmptyDatabase } from './helpers/app.js';
import { BUILD_LIMIT_MS, ensureBuilt, ROOT, SERVER_ENTRY } from './helpers/compiled-server.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-'));
const children: ChildProcess[] = [];
/** Bounds a test only against a hang: starting takes seconds, more on a loaded machine. */
const TEST_LIMIT_MS = 300_000;

// What `npm start` does first (its prestart script): build unless dist/ is current.
beforeAll(ensureBuilt, BUILD_LIMIT_MS);

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

async function startServer(port: number, extra: NodeJS.ProcessEnv = {}): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...extra,
  };
  const child = spawn(process.execPath, [SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  // Ready, and done saying so: /ready answers as soon as the server listens, a moment before its last line.
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${baseUrl}/ready`).then(
      (response) => response.ok,
      () => false,
    );
    return ready && output.includes('site-services: listening on ');
  });
  return { child, baseUrl, output: () => output, exited };
}

/** A start expected to fail: its exit code and everything it wrote (the start-up lines on stderr). */
async function failedStart(
  extra: NodeJS.ProcessEnv,
  entry = SERVER_ENTRY,
  args: string[] = [],
): Promise<{ code: number | null; output: string; stdout: string }> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, HOST: '127.0.0.1', ...extra };
  const child = spawn(process.execPath, [entry, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', (exit) => resolve(exit)));
  return { code, output, stdout };
}

/** Polls `condition` every 20 ms until it holds (the test's timeout bounds the wait). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The plain progress lines a sandbox start writes to stderr. */
function progressLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('site-services: '))
    .map((line) => line.slice('site-services: '.length));
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
  it(
    'first start: says what it does, prints the credential packet and operator token, writes them (0600), serves, and stops cleanly on SIGTERM',
    async () => {
      const port = await freePort();
      const server = await startServer(port);

      // What it did, in order: a copy of the build's migrated template (so nothing to migrate), the demo tenant.
      const progress = progressLines(server.output());
      expect(progress[0], server.output()).toMatch(
        /^created the embedded database in .+ from the build's migrated template$/,
      );
      expect(progress).toContain('provisioning the sandbox tenant…');
      expect(progress.some((line) => line.startsWith('migrating'))).toBe(false);
      expect(progress.at(-1)).toMatch(
        new RegExp(`^listening on http://127\\.0\\.0\\.1:${port} \\(ready [\\d.]+ s after start\\)$`),
      );

      // The packet, printed once (after the listening line, on stdout: waited for), and the same as credentials.json.
      await until(() => /\{\n\s+"baseUrl"[\s\S]*?\n\}/.test(server.output()));
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
    },
    TEST_LIMIT_MS,
  );

  it(
    'restart: no packet again, says where the client credentials and the operator token are; on another port the packet follows',
    async () => {
      // On another port than the first start's (each start here takes a free one): the packet's baseUrl, which
      // svc and the README's commands read, is made this start's, and the line says so.
      const packetFile = path.join(dataDir, 'credentials.json');
      const before = JSON.parse(fs.readFileSync(packetFile, 'utf8'));
      const server = await startServer(await freePort());
      const progress = progressLines(server.output());
      expect(progress, server.output()).toEqual([
        `client credentials are in ${packetFile} (its baseUrl is now ${server.baseUrl}, was ${before.baseUrl})`,
        `operator API token is in ${path.join(dataDir, 'admin-token')}`,
        expect.stringMatching(/^listening on /),
      ]);
      expect(JSON.parse(fs.readFileSync(packetFile, 'utf8'))).toEqual({ ...before, baseUrl: server.baseUrl });
      expect(fs.statSync(packetFile).mode & 0o777).toBe(0o600);
      expect(server.output()).not.toContain('client_secret');
      expect(server.output()).not.toContain(fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim());
      expect((await fetch(`${server.baseUrl}/ready`)).status).toBe(200);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    },
    TEST_LIMIT_MS,
  );

  it(
    "a DATA_DIR shared by two databases: each one's packet is kept aside for the other's start, never overwritten",
    async () => {
      // Another database's packet in DATA_DIR, as a start with DATABASE_URL set (or unset) on the same ./data
      // leaves it: this database's first start keeps it aside rather than writing over it.
      const own = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-shared-'));
      const packetFile = path.join(own, 'credentials.json');
      const other = { baseUrl: 'http://127.0.0.1:1', tenantId: 'tnt_otherdatabase0', client_id: 'cli_other' };
      const otherAside = path.join(own, 'credentials-tnt_otherdatabase0.json');
      fs.writeFileSync(packetFile, JSON.stringify(other));
      const first = await startServer(await freePort(), { DATA_DIR: own });
      expect(progressLines(first.output())).toContain(
        `DATA_DIR held another database's credential packet: kept as ${otherAside}, for a start on that database`,
      );
      expect(JSON.parse(fs.readFileSync(otherAside, 'utf8'))).toEqual(other);
      const ours = JSON.parse(fs.readFileSync(packetFile, 'utf8'));
      expect(ours.tenantId).not.toBe(other.tenantId);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      // The other database's start then keeps ours aside and writes its own: our restart puts ours back.
      const oursAside = path.join(own, `credentials-${ours.tenantId}.json`);
      fs.renameSync(packetFile, oursAside);
      fs.renameSync(otherAside, packetFile);
      const restart = await startServer(await freePort(), { DATA_DIR: own });
      const progress = progressLines(restart.output());
      expect(progress, restart.output()).toContain(
        `credentials.json was another database's (tenant tnt_otherdatabase0), kept as ${otherAside}; ` +
          `this database's put back from ${oursAside}`,
      );
      expect(progress).toContain(
        `client credentials are in ${packetFile} (its baseUrl is now ${restart.baseUrl}, was ${ours.baseUrl})`,
      );
      const packet = JSON.parse(fs.readFileSync(packetFile, 'utf8'));
      expect(packet).toEqual({ ...ours, baseUrl: restart.baseUrl });
      // Its credentials obtain a token (form-encoded, as the README's curl sends them).
      const { client_id, client_secret } = packet;
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret });
      expect((await fetch(`${restart.baseUrl}/api/v1/oauth/token`, { method: 'POST', body: form })).status).toBe(200);
      restart.child.kill('SIGTERM');
      expect(await restart.exited).toBe(0);

      // Only another database's packet, none of ours: said as such, not "client credentials are in".
      fs.rmSync(packetFile);
      fs.renameSync(otherAside, packetFile);
      fs.rmSync(path.join(own, `credentials-${ours.tenantId}.json`), { force: true });
      const lost = await startServer(await freePort(), { DATA_DIR: own });
      const said = progressLines(lost.output());
      expect(said.some((line) => line.startsWith('client credentials are in'))).toBe(false);
      expect(said).toContain(
        `client credentials in ${packetFile} are not this database's: its tenant tnt_otherdatabase0 is not in it ` +
          '(written by a start on another database with this DATA_DIR), and DATA_DIR holds none of this database: ' +
          'give each database a DATA_DIR of its own',
      );
      lost.child.kill('SIGTERM');
      expect(await lost.exited).toBe(0);
      fs.rmSync(own, { recursive: true, force: true });
    },
    TEST_LIMIT_MS,
  );

  it(
    'a second start on the same DATA_DIR is refused, saying what to do, and the first serves on; after a kill -9 it starts',
    async () => {
      const first = await startServer(await freePort());
      const second = await failedStart({ PORT: String(await freePort()) });
      expect(second.code).toBe(1);
      expect(second.output).toBe(
        `startup failed: the embedded database in ${path.join(dataDir, 'pgdata')} is open in another process (a ` +
          'site-services or `npm run migrate` on the same DATA_DIR): it serves one process only, and a second ' +
          'one would damage it. Stop the other process first, or give this one a DATA_DIR of its own (or ' +
          'DATABASE_URL).\n',
      );
      // `npm run migrate` is refused the same way, without a stack.
      const migrate = await failedStart({}, path.join(ROOT, 'dist', 'db', 'migrate-cli.js'));
      expect(migrate).toMatchObject({ code: 1, output: second.output.replace(/^startup failed/, 'migrate failed') });
      // The same port, with a DATA_DIR of its own (a first start): the port is named with how to pick another,
      // before the database is opened, so no sandbox is provisioned and no credentials are printed or written.
      const own = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-port-'));
      const port = new URL(first.baseUrl).port;
      const samePort = await failedStart({ PORT: port, DATA_DIR: own });
      expect(samePort).toEqual({
        code: 1,
        output:
          `startup failed: port ${port} of 127.0.0.1 is in use by another process (a site-services already ` +
          `running?): stop it, or start this one with PORT set to a free port, e.g. PORT=${Number(port) + 1} npm start\n`,
        stdout: '',
      });
      expect(fs.readdirSync(own)).toEqual([]);
      // METRICS_PORT taken: named the same way, and nothing opened either.
      const metricsTaken = await failedStart({ PORT: String(await freePort()), METRICS_PORT: port, DATA_DIR: own });
      expect(metricsTaken.output).toMatch(
        new RegExp(`^startup failed: port ${port} of 127\\.0\\.0\\.1 is in use .*with METRICS_PORT set to a free port`),
      );
      expect(metricsTaken.stdout).toBe('');
      expect(fs.readdirSync(own)).toEqual([]);
      fs.rmSync(own, { recursive: true, force: true });
      expect((await fetch(`${first.baseUrl}/ready`)).status).toBe(200);

      // Killed, the first leaves its lock's file behind; the next start replaces it and serves.
      first.child.kill('SIGKILL');
      await first.exited;
      const next = await startServer(await freePort());
      expect((await fetch(`${next.baseUrl}/ready`)).status).toBe(200);
      next.child.kill('SIGTERM');
      expect(await next.exited).toBe(0);
    },
    TEST_LIMIT_MS,
  );

  it(
    'an embedded database PGlite cannot open: the start says where it is and what to do, not a WebAssembly stack',
    async () => {
      const damaged = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-damaged-'));
      const pgdata = path.join(damaged, 'pgdata');
      fs.cpSync(TEMPLATE_DIR, pgdata, { recursive: true });
      fs.truncateSync(path.join(pgdata, 'global', 'pg_control'), 100);
      const start = await failedStart({ PORT: String(await freePort()), DATA_DIR: damaged });
      expect(start.code).toBe(1);
      expect(start.output).toMatch(
        new RegExp(
          `^startup failed: the embedded database in ${pgdata} could not be opened \\(PGlite: Aborted\\(\\)\\): its files are damaged .* Keep a copy of ${pgdata}, then move it away and start again`,
          'm',
        ),
      );
      expect(start.output).not.toMatch(/\n\s+at |-sASSERTIONS/);
      fs.rmSync(damaged, { recursive: true, force: true });
    },
    TEST_LIMIT_MS,
  );

  it(
    'npm start and npm run migrate take no arguments: one is refused naming it, before anything is opened; a configuration they cannot read is said without a stack',
    async () => {
      const own = path.join(os.tmpdir(), `server-test-args-${process.pid}`);
      const migrateCli = path.join(ROOT, 'dist', 'db', 'migrate-cli.js');
      for (const [entry, command] of [
        [SERVER_ENTRY, 'site-services'],
        [migrateCli, 'migrate'],
      ] as const) {
        const run = await failedStart({ DATA_DIR: own }, entry, ['--port', '3001']);
        expect(run.code).toBe(2);
        expect(run.output).toMatch(new RegExp(`^${command}: unknown argument --port\nusage: npm `));
        const config = await failedStart({ DATA_DIR: own, PORT: 'abc' }, entry);
        expect(config).toMatchObject({
          code: 78,
          output: 'Invalid configuration:\n  - PORT must be an integer from 0 to 65535 (got "abc")\n',
        });
      }
      expect(fs.existsSync(own)).toBe(false);
    },
    TEST_LIMIT_MS,
  );

  it(
    'a HOST that is not an address of this machine: the start says so and what to set, not a stack trace',
    async () => {
      const own = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-host-'));
      // 192.0.2.1: TEST-NET-1 (RFC 5737), documentation only, never an address of a machine.
      const start = await failedStart({ HOST: '192.0.2.1', PORT: String(await freePort()), DATA_DIR: own });
      expect(start.code).toBe(1);
      expect(start.output).toMatch(
        /^startup failed: 192\.0\.2\.1 \(HOST\) is not an address of this machine: set HOST to one of its addresses, 127\.0\.0\.1/m,
      );
      expect(start.output).not.toMatch(/\n\s+at /);
      fs.rmSync(own, { recursive: true, force: true });
    },
    TEST_LIMIT_MS,
  );

  it(
    'a DATABASE_URL it cannot use: the start and npm run migrate say why and what to do, not a stack trace',
    async () => {
      const migrateCli = path.join(ROOT, 'dist', 'db', 'migrate-cli.js');
      const port = await freePort();
      const refused = { PORT: String(await freePort()), DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/any` };
      const saying = `nothing accepts connections at 127\\.0\\.0\\.1:${port}, the PostgreSQL server of DATABASE_URL .*: start PostgreSQL there, or correct the host and port of DATABASE_URL`;
      for (const [entry, prefix] of [
        [SERVER_ENTRY, 'startup failed'],
        [migrateCli, 'migrate failed'],
      ] as const) {
        const run = await failedStart(refused, entry);
        expect(run.code).toBe(1);
        expect(run.output).toMatch(new RegExp(`^${prefix}: ${saying}`));
        expect(run.output).not.toMatch(/\n\s+at /);
      }
      const databaseUrl = inject('databaseUrl');
      if (databaseUrl) {
        // A database of that server that does not exist: how to create it, the password never repeated.
        const missing = new URL(databaseUrl);
        missing.pathname = '/ss_server_absent';
        const run = await failedStart({ PORT: String(await freePort()), DATABASE_URL: missing.href });
        expect(run.output).toMatch(
          /^startup failed: the database "ss_server_absent" does not exist on .*: create it \(`createdb -h .* ss_server_absent`/,
        );
        if (missing.password) expect(run.output).not.toContain(missing.password);
      }
    },
    TEST_LIMIT_MS,
  );

  it.runIf(inject('databaseUrl'))(
    'on PostgreSQL: a migrated database of its own starts without migrating, provisions the demo tenant, serves',
    async () => {
      const empty = await openEmptyDatabase('ss_server');
      try {
        const own = fs.mkdtempSync(path.join(os.tmpdir(), 'server-test-pg-'));
        const server = await startServer(await freePort(), { DATABASE_URL: empty.url, DATA_DIR: own });
        const progress = progressLines(server.output());
        expect(progress, server.output()).toEqual([
          'provisioning the sandbox tenant…',
          expect.stringMatching(/^listening on /),
        ]);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
        fs.rmSync(own, { recursive: true, force: true });
      } finally {
        await empty.drop();
      }
    },
    TEST_LIMIT_MS,
  );
});
