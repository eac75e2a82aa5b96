/**
 * svc import of a file it cannot read: a `.json` file (an array, most likely) or a CSV that csv-parse refuses
 * (a stray quote) ended in csv-parse's CsvError and its stack. Now it is refused before any row is sent,
 * saying what svc import reads, with the jq line that makes JSON Lines of a JSON array. So are a directory
 * and a --report where no directory is (it failed after every row had been sent).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../packages/client/src/cli/main.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-import-formats-'));
const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_CLIENT_ID: 'cli_x', SVC_CLIENT_SECRET: 'secret_x' };
afterEach(() => vi.restoreAllMocks());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function importFile(name: string, content: string) {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  let stderr = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const fetch = vi.fn(() => Promise.reject(new Error('svc sent a request')));
  const code = await main(['import', 'sites', file], env, { fetch });
  vi.restoreAllMocks();
  return { code, stderr, sent: fetch.mock.calls.length, file };
}

describe('svc import of a file it cannot read', () => {
  it('refuses a .json file, saying how to make JSON Lines of it', async () => {
    const run = await importFile('sites.json', '[{"name":"Store 1","siteCode":"S-1"}]\n');
    expect(run.code).toBe(2);
    expect(run.sent).toBe(0);
    expect(run.stderr).toContain(`svc import: ${run.file} is JSON, which svc import does not read`);
    expect(run.stderr).toContain(`(from a JSON array: jq -c '.[]' ${run.file} > ${path.join(dir, 'sites')}.jsonl)`);
    expect(run.stderr).not.toMatch(/CsvError|at .*\(file:/);
  });

  it('refuses a CSV csv-parse cannot read, naming its reason, and sends nothing', async () => {
    const run = await importFile('sites.csv', 'name,siteCode\nStore "1",S-1\n"Store 2,S-2\n');
    expect(run.code).toBe(2);
    expect(run.sent).toBe(0);
    expect(run.stderr).toMatch(
      /^svc import: .*sites\.csv is not CSV svc import can read \(.*quote.*\); a \.csv file has/i,
    );
    expect(run.stderr).not.toContain('jq');
  });

  it('a JSON object written into a .csv file is said to be JSON too', async () => {
    const run = await importFile('export.csv', '{"name":"Store 1"}\n');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('is not CSV svc import can read');
    expect(run.stderr).toContain(
      `(JSON objects one per line are JSON Lines: name the file ${path.join(dir, 'export')}.jsonl)`,
    );
  });

  it('a directory is said to be one, not thrown as EISDIR with a stack', async () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    const fetch = vi.fn(() => Promise.reject(new Error('svc sent a request')));
    expect(await main(['import', 'sites', dir], env, { fetch })).toBe(2);
    expect(stderr).toBe(`svc import: ${dir} is a directory; name the file to import\n`);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('a --report in a directory that is not there is refused before any row is sent', async () => {
    const file = path.join(dir, 'ok.csv');
    writeFileSync(file, 'name,siteCode\nStore 1,S-1\n');
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    const fetch = vi.fn(() => Promise.reject(new Error('svc sent a request')));
    const report = path.join(dir, 'missing', 'report.json');
    expect(await main(['import', 'sites', file, '--report', report], env, { fetch })).toBe(2);
    expect(stderr).toBe(
      `svc import: --report ${report}: there is no directory ${path.join(dir, 'missing')}. Nothing was sent.\n`,
    );
    expect(fetch).not.toHaveBeenCalled();
  });
});
