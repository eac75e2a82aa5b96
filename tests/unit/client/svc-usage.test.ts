/**
 * What `svc` says to someone finding their way: `svc <command> --help` (and `svc help <command>`) shows that
 * command alone; a mistyped command or option is named, with the one most likely meant and what the command
 * takes; a usage mistake is said as one before credentials are looked for. No service is asked: every case
 * here ends before a request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_RATE, MAX_RATE } from '../../../packages/client/src/cli/import/pace.js';
import { main } from '../../../packages/client/src/cli/main.js';

async function svc(args: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  const fetch = () => Promise.reject(new Error('svc sent a request'));
  const code = await main(args, env, { fetch });
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

afterEach(() => vi.restoreAllMocks());

describe('svc help', () => {
  it('shows one command for svc <command> --help and svc help <command>, every command for svc --help', async () => {
    for (const args of [
      ['listen', '--help'],
      ['help', 'listen'],
      ['listen', '-h'],
    ]) {
      const run = await svc(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toContain('svc listen --forward-to <url> [--events type,type] [--new-secret]');
      expect(run.stdout).not.toContain('svc import');
      expect(run.stdout).toContain('SVC_CREDENTIALS_FILE');
    }
    for (const args of [['--help'], ['help']]) {
      const run = await svc(args);
      expect(run.code, args.join(' ')).toBe(0);
      for (const command of ['import', 'token', 'get', 'listen', 'trigger'])
        expect(run.stdout).toContain(`  svc ${command} `);
    }
  });
});

describe('svc import --help', () => {
  it('says the pace an import runs at unless --rate says otherwise, and the most --rate takes', async () => {
    const run = await svc(['import', '--help']);
    expect(run.stdout).toContain(`one create per row, ${DEFAULT_RATE} a minute unless --rate (at most ${MAX_RATE})`);
  });
});

describe('svc --version', () => {
  it("prints the package's version", async () => {
    const run = await svc(['--version']);
    expect(run.code).toBe(0);
    const { version } = JSON.parse(fs.readFileSync('packages/client/package.json', 'utf8'));
    expect(run.stdout).toBe(`${version}\n`);
  });
});

describe('svc usage mistakes (exit 2, nothing sent)', () => {
  it('names an unknown command, and the one most likely meant', async () => {
    const typo = await svc(['lsten', '--forward-to', 'http://localhost:8080/webhooks']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^svc: unknown command "lsten" \(did you mean svc listen\?\)\nusage:/);
    const other = await svc(['frobnicate']);
    expect(other.stderr).toMatch(/^svc: unknown command "frobnicate"\nusage:/);
  });

  it("says what svc does instead of another tool's command, not a command spelled alike", async () => {
    const list = await svc(['list', 'site-visits']);
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(/^svc: unknown command "list" \(to list, svc get site-visits\)\nusage:/);
    expect(list.stderr).not.toContain('did you mean svc listen');
    expect((await svc(['create', 'sites'])).stderr).toMatch(
      /^svc: unknown command "create" \(to create, svc import sites <file\.csv\|file\.jsonl> \(one create per row\)\)/,
    );
    expect((await svc(['login'])).stderr).toMatch(
      /^svc: unknown command "login" \(svc keeps no login: set SVC_CREDENTIALS_FILE/,
    );
  });

  it("names an unknown option, the command's options and the one most likely meant", async () => {
    const listen = await svc(['listen', '--forward', 'http://localhost:8080/webhooks']);
    expect(listen.code).toBe(2);
    expect(listen.stderr).toMatch(
      /^svc listen: unknown option --forward \(did you mean --forward-to\?\); it takes --forward-to, --events, --new-secret\nusage:\n {2}svc listen /,
    );
    expect(listen.stderr).not.toContain('svc import');
    const token = await svc(['token', '--jsn']);
    expect(token.stderr).toMatch(/^svc token: unknown option --jsn \(did you mean --json\?\); it takes --json\n/);
    const get = await svc(['get', 'sites', '--json']);
    expect(get.code).toBe(2);
    expect(get.stderr).toMatch(/^svc get: --json belongs to svc token\nusage:\n {2}svc get <path>/);
  });

  it('says a usage mistake as one before looking for credentials', async () => {
    for (const args of [['trigger'], ['trigger', 'visit_x'], ['get'], ['import', 'sites']]) {
      const run = await svc(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(`usage:\n  svc ${args[0]} `);
      expect(run.stderr).not.toContain('missing credentials');
    }
    // svc trigger $VISIT complete-lifecycle, VISIT empty: the missing visit id is named.
    const action = await svc(['trigger', 'complete-lifecycle']);
    expect(action.code).toBe(2);
    expect(action.stderr).toMatch(
      /^svc trigger: complete-lifecycle is an action: the visit id comes first \(svc trigger <visit-id> complete-lifecycle\); an empty variable/,
    );
    const resource = await svc(['import', 'site', 'sites.csv']);
    expect(resource.stderr).toMatch(/^svc import: unknown resource "site": sites, site-visits, messages\n/);
  });
});

describe('an option without its value', () => {
  it("names the command and shows that command's usage alone", async () => {
    for (const [args, option] of [
      [['listen', '--forward-to'], '--forward-to'],
      [['import', 'sites', 'sites.csv', '--rate'], '--rate'],
      [['token', '--json=yes'], '--json'],
    ] as const) {
      const run = await svc([...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(new RegExp(`^svc ${args[0]}: Option '${option}`));
      expect(run.stderr, args.join(' ')).toContain(`  svc ${args[0]} `);
      for (const other of ['import', 'token', 'get', 'listen', 'trigger'].filter((name) => name !== args[0]))
        expect(run.stderr, args.join(' ')).not.toContain(`  svc ${other} `);
    }
  });
});

describe('a credential packet without its members', () => {
  it('names the file and the members it lacks, and the names a packet uses when it has createClient’s', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-packet-'));
    try {
      const file = path.join(dir, 'creds.json');
      fs.writeFileSync(file, JSON.stringify({ baseUrl: 'http://127.0.0.1:9', clientId: 'cli_x', clientSecret: 's' }));
      const run = await svc(['token'], { SVC_CREDENTIALS_FILE: file });
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `svc: missing credentials: SVC_CREDENTIALS_FILE ${file} has no client_id, client_secret (it has clientId, clientSecret: a credential packet names them baseUrl, client_id and client_secret), and SVC_CLIENT_ID, SVC_CLIENT_SECRET are not set\n`,
      );
      const beside = await svc(['token'], { SVC_CREDENTIALS_FILE: file, SVC_CLIENT_ID: 'cli_x' });
      expect(beside.stderr).toContain(`${file} has no client_secret (it has clientId, clientSecret`);
      expect(beside.stderr).toContain('and SVC_CLIENT_SECRET is not set');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
