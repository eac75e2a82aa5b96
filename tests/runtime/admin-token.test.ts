/**
 * ADMIN_TOKEN as the real server reads it at start (adversarial probe). A token the operator could never
 * send as `Authorization: Bearer <token>` (white space inside, a character outside RFC 6750's token68) used to
 * start a server whose operator API no request could reach; it now stops the start with a message naming
 * ADMIN_TOKEN, without echoing the value. White space around the token (the line break `$(cat file)` or an
 * env file leaves) is trimmed, as for every variable: that server starts and answers the trimmed token.
 * The server runs as `npm start` does (src/server.ts), on PGlite or, with TEST_DATABASE_URL, on a PostgreSQL
 * database of its own.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { openEmptyDatabase } from '../helpers/app.js';
import { killAll, startNode, startServer } from '../helpers/real-processes.js';

const TOKEN = `adm_${randomBytes(18).toString('base64url')}`;
/** The start-up error for ADMIN_TOKEN (src/config.ts); the process exits 78 (EX_CONFIG). */
const REFUSED = /ADMIN_TOKEN must be at least 16 characters of a Bearer token \(RFC 6750\)/;

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-token-'));
let empty: Awaited<ReturnType<typeof openEmptyDatabase>> | undefined;
let databaseEnv: Record<string, string> = {};
beforeAll(async () => {
  if (inject('databaseUrl')) {
    empty = await openEmptyDatabase('ss_admin_token');
    databaseEnv = { DATABASE_URL: empty.url! };
  }
});
afterAll(async () => {
  killAll();
  await empty?.drop();
  fs.rmSync(directory, { recursive: true, force: true });
});

async function environment(adminToken: string): Promise<Record<string, string>> {
  return {
    ADMIN_TOKEN: adminToken,
    DATA_DIR: path.join(directory, 'data'),
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ...databaseEnv,
  };
}

describe('ADMIN_TOKEN at start', () => {
  it.each([
    ['a space inside', `${TOKEN.slice(0, 12)} ${TOKEN.slice(12)}`],
    ['a tab inside', `${TOKEN.slice(0, 12)}\t${TOKEN.slice(12)}`],
    ['a line break inside', `${TOKEN.slice(0, 12)}\n${TOKEN.slice(12)}`],
    ['a character outside token68', `${TOKEN}!`],
    ['a letter outside ASCII', `${TOKEN}é`],
  ])('%s: the start is refused with a message naming ADMIN_TOKEN, the value not echoed', async (_label, token) => {
    const server = startNode(['--import', 'tsx', 'src/server.ts'], await environment(token));
    // A server that starts instead fails the test at once (and is stopped), not at the test's timeout.
    const listening = server.waitFor(/listening on /, 240_000).then(
      () => 'listening' as const,
      () => server.exited,
    );
    const outcome = await Promise.race([server.exited, listening]);
    if (outcome === 'listening') server.child.kill('SIGKILL');
    expect(outcome, server.output()).toBe(78);
    expect(server.output()).toMatch(REFUSED);
    expect(server.output()).not.toContain(TOKEN.slice(12));
  });

  it('a trailing line break and spaces are trimmed: the server starts and the operator API answers the token', async () => {
    const env = await environment(`  ${TOKEN}\n`);
    const baseUrl = `http://127.0.0.1:${env.PORT}`;
    const server = await startServer(env, baseUrl);
    try {
      const tenants = await fetch(`${baseUrl}/admin/v1/tenants`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(tenants.status, await tenants.text()).toBe(200);
      const wrong = await fetch(`${baseUrl}/admin/v1/tenants`, { headers: { authorization: `Bearer ${TOKEN}x` } });
      expect(wrong.status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });
});
