/**
 * kill -9 of the API process at random moments during a 1,000-record import made with the project's own
 * command (`svc import sites`, packages/client). The API process is killed while the import runs and
 * started again on the same port; the command rides out the outage with its retries (each row under its
 * own Idempotency-Key) or stops with exit 3, and is then re-run with the same progress log to resume.
 * Every run ends with exactly 1,000 sites of the file: none lost, none duplicated.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, ROOT } from '../../bench/lib/processes.js';
import { reportFigure, scaled } from './lib/figures.js';
import { type FaultStage, faultStage, type Service } from './lib/service.js';

const RECORDS = 1_000;
const RUNS = scaled(1, 20);
const KILLS_PER_RUN = 2;

let stage: FaultStage;
let port: number;
let api: Service;
let tenant: Awaited<ReturnType<FaultStage['tenant']>>;
beforeAll(async () => {
  stage = await faultStage('import-kill');
  port = await freePort();
  api = await stage.startApi({}, { port });
  tenant = await stage.tenant();
});
afterAll(async () => stage?.close());

/** Runs `svc import` to its end; resolves with its exit code and output. */
function svcImport(
  file: string,
  progress: string,
  report: string,
): { done: Promise<{ code: number; output: string }> } {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'packages/client/src/cli/bin.ts'),
      'import',
      'sites',
      file,
      '--rate',
      '600000',
      '--progress',
      progress,
      '--report',
      report,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        SVC_BASE_URL: api.baseUrl,
        SVC_CLIENT_ID: tenant.clientId,
        SVC_CLIENT_SECRET: tenant.clientSecret,
        // The test server's rate limit is raised; the command's own pacing would otherwise take 30 minutes.
        SVC_ALLOW_RATE_ABOVE_LIMIT: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-5_000)));
  child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-5_000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return {
    done: new Promise((resolve) =>
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, output });
      }),
    ),
  };
}

it(`${RUNS} runs of a ${RECORDS}-record import through kill -9 of the API`, {
  timeout: 60_000 + RUNS * 120_000,
}, async () => {
  let kills = 0;
  let reruns = 0;
  let exact = 0;
  for (let run = 0; run < RUNS; run++) {
    const directory = fs.mkdtempSync(path.join(stage.env.DATA_DIR!, `import-${run}-`));
    const prefix = `IMP${run}-${randomInt(1e9)}`;
    const file = path.join(directory, 'sites.csv');
    const lines = ['name,siteCode,addressLine1,city,stateRegion,postalCode,country'];
    for (let row = 1; row <= RECORDS; row++)
      lines.push(`Store ${row},${prefix}-${row},${row} Main Street,Springfield,IL,62701,US`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const progress = path.join(directory, 'progress.log');
    const report = path.join(directory, 'report.json');

    let finished = false;
    let attempt = 0;
    const importing = (async () => {
      for (;;) {
        const { code, output } = await svcImport(file, progress, report).done;
        if (code === 0) return;
        expect(code, `svc import exited ${code}:\n${output}`).toBe(3);
        attempt++;
        reruns++;
        expect(attempt, 'too many re-runs').toBeLessThan(6);
      }
    })().finally(() => (finished = true));
    for (let kill = 0; kill < KILLS_PER_RUN && !finished; kill++) {
      await new Promise((resolve) => setTimeout(resolve, randomInt(300, 2_500)));
      if (finished) break;
      const exited = new Promise((resolve) => api.child.once('exit', resolve));
      api.child.kill('SIGKILL');
      await exited;
      kills++;
      api = await stage.startApi({}, { port });
    }
    await importing;

    const counts = await stage.rows<{ n: number; codes: number }>(
      `select count(*)::int as n, count(distinct site_code)::int as codes from sites where tenant_id = '${tenant.tenantId}' and site_code like '${prefix}-%'`,
    );
    expect(counts[0]).toEqual({ n: RECORDS, codes: RECORDS });
    exact++;
  }
  reportFigure(
    'import-kill',
    `${exact}/${RUNS} runs with exactly ${RECORDS}/${RECORDS} records (0 lost, 0 duplicated) through ${kills} kill -9 of the API process, ${reruns} resumed re-runs of svc import`,
  );
});
