/**
 * wrk (Debian's package), as an integrator's harness drives the service: a fixed number of connections
 * over a few threads, each request built by a Lua script (a random id from a range, a bearer token, a
 * fresh Idempotency-Key, a body with unique members). The script's `done` prints one line of JSON with
 * the counts and the latency percentiles, which `wrk()` reads back.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RoundResult } from '../load.js';
import { run } from './processes.js';

export interface WrkSpec {
  /** Origin and default path (the path of a fixed request). */
  url: string;
  method: 'GET' | 'POST';
  connections: number;
  threads: number;
  durationS: number;
  headers?: Record<string, string>;
  /** The path with one `%d`, filled with a random integer in [from, to] per request (a random id). */
  randomPath?: { format: string; from: number; to: number };
  /** A JSON body; every occurrence of `marker` in it becomes a value unique to the request. */
  body?: { json: string; marker: string };
  /** Send a fresh Idempotency-Key with every request. */
  idempotencyKey?: boolean;
}

export function wrkBinary(): string {
  const found = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((candidate) => existsSync(candidate));
  if (!found) throw new Error('wrk not found: install it with `apt-get install -y wrk` (Debian package wrk)');
  return found;
}

export async function wrkVersion(): Promise<string> {
  // `wrk --version` prints its banner and usage, and exits 1.
  const output = await run(wrkBinary(), ['--version']).catch((error: Error) => error.message);
  return /^wrk (\S+) \[/m.exec(output)?.[1] ?? 'unknown';
}

/** A Lua string literal of any text (long brackets cannot hold every text; escapes can). */
function lua(text: string): string {
  return `"${[...Buffer.from(text, 'utf8')].map((byte) => `\\${String(byte).padStart(3, '0')}`).join('')}"`;
}

/** The script: builds each request and reports the totals and percentiles as JSON on one line. */
function script(spec: WrkSpec, runId: string): string {
  const url = new URL(spec.url);
  const headers = { ...spec.headers, ...(spec.body ? { 'content-type': 'application/json' } : {}) };
  const bodyParts = spec.body ? spec.body.json.split(spec.body.marker) : undefined;
  return `
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local counter = 0
local headers = {}
${Object.entries(headers)
  .map(([name, value]) => `headers[${lua(name)}] = ${lua(value)}`)
  .join('\n')}
local bodyParts = {${(bodyParts ?? []).map(lua).join(', ')}}

function init(args)
  math.randomseed(os.time() * 1000 + tid * 7919)
end

function request()
  counter = counter + 1
  local unique = ${lua(runId)} .. "-" .. tid .. "-" .. counter
  ${spec.idempotencyKey ? 'headers["idempotency-key"] = unique' : ''}
  local path = ${
    spec.randomPath
      ? `string.format(${lua(spec.randomPath.format)}, math.random(${spec.randomPath.from}, ${spec.randomPath.to}))`
      : lua(`${url.pathname}${url.search}`)
  }
  local body = nil
  if #bodyParts > 0 then body = table.concat(bodyParts, unique) end
  return wrk.format(${lua(spec.method)}, path, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`;
}

/** One run of wrk for `durationS` seconds: throughput, failures and latency (ms) as the bench reports them. */
export async function wrk(spec: WrkSpec, durationS = spec.durationS): Promise<RoundResult> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'ss-wrk-'));
  try {
    const file = path.join(directory, 'script.lua');
    writeFileSync(file, script(spec, `${process.pid.toString(36)}${Date.now().toString(36)}`));
    const output = await run(wrkBinary(), [
      '-t',
      String(spec.threads),
      '-c',
      String(spec.connections),
      '-d',
      `${durationS}s`,
      '--timeout',
      '30s',
      '-s',
      file,
      spec.url,
    ]);
    const line = /WRK_RESULT (\{.*\})/.exec(output)?.[1];
    if (!line) throw new Error(`wrk output not understood:\n${output}`);
    const r = JSON.parse(line) as Record<string, number>;
    const seconds = r.durationUs! / 1e6;
    return {
      rps: r.requests! / seconds,
      p50: r.p50! / 1000,
      p99: r.p99! / 1000,
      max: r.max! / 1000,
      mean: r.mean! / 1000,
      requests: r.requests!,
      non2xx: r.status!,
      errors: r.connect! + r.read! + r.write!,
      timeouts: r.timeout!,
      statusCodes: {},
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
