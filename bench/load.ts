/**
 * The load generator, a process of its own (forked by the bench, answering over IPC) so that driving
 * load never shares an event loop with what is measured. HTTP load is autocannon with a fixed number of
 * connections, a warm-up and several rounds; uploads and the receiver baseline use undici directly.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { Pool, request } from 'undici';
import { serveRequests } from './lib/processes.js';

export interface HttpLoadSpec {
  url: string;
  method: 'GET' | 'POST';
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  headers?: Record<string, string>;
  /** Each request takes one of these paths at random (else the URL's own path). */
  paths?: string[];
  /** A JSON body; the named string members get a unique suffix per request. */
  body?: { template: Record<string, unknown>; unique?: string[] };
  /** Send a fresh Idempotency-Key with every request. */
  idempotencyKey?: boolean;
  /** Requests per second over all connections (paced load); unset: as fast as the server answers. */
  overallRate?: number;
  /** Note when each created resource's response arrived (`RoundResult.createdAt`). */
  recordCreated?: boolean;
}

export interface RoundResult {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** With `recordCreated`: when each 201 response arrived (epoch ms), by the created resource's id. */
  createdAt?: Record<string, number>;
}

const runId = randomBytes(4).toString('hex');
let counter = 0;

function unique(): string {
  counter += 1;
  return `${runId}-${counter}`;
}

function requestBuilder(spec: HttpLoadSpec) {
  const paths = spec.paths;
  const template = spec.body?.template;
  const uniqueFields = spec.body?.unique ?? [];
  return (req: Record<string, unknown>) => {
    const next: Record<string, unknown> = { ...req };
    if (paths) next.path = paths[Math.floor(Math.random() * paths.length)];
    const headers: Record<string, string> = { ...(req.headers as Record<string, string>) };
    if (spec.idempotencyKey) headers['idempotency-key'] = randomUUID();
    if (template) {
      const suffix = unique();
      const body: Record<string, unknown> = { ...template };
      for (const field of uniqueFields) body[field] = `${String(body[field])}-${suffix}`;
      next.body = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    next.headers = headers;
    return next;
  };
}

function once(spec: HttpLoadSpec, durationS: number): Promise<RoundResult> {
  return new Promise((resolve, reject) => {
    const url = new URL(spec.url);
    const createdAt: Record<string, number> = {};
    const onResponse = (status: number, body: string) => {
      if (status !== 201) return;
      const id = (JSON.parse(body) as { data?: { id?: string } }).data?.id;
      if (id) createdAt[id] = Date.now();
    };
    const options: autocannon.Options = {
      url: url.origin,
      connections: spec.connections,
      pipelining: 1,
      duration: durationS,
      method: spec.method,
      headers: spec.headers ?? {},
      timeout: 30,
      requests: [
        {
          method: spec.method,
          path: `${url.pathname}${url.search}`,
          setupRequest: requestBuilder(spec) as never,
          ...(spec.recordCreated ? { onResponse } : {}),
        },
      ],
      ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    };
    autocannon(options, (error, result) => {
      if (error) return reject(error);
      const statusCodes: Record<string, number> = {};
      for (const [code, stats] of Object.entries(
        (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {},
      )) {
        statusCodes[code] = stats.count;
      }
      resolve({
        rps: result.requests.total / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        max: result.latency.max,
        mean: result.latency.average,
        requests: result.requests.total,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes,
        ...(spec.recordCreated ? { createdAt } : {}),
      });
    });
  });
}

async function httpLoad(spec: HttpLoadSpec): Promise<RoundResult[]> {
  if (spec.warmupS > 0) await once(spec, spec.warmupS);
  const rounds: RoundResult[] = [];
  for (let round = 0; round < spec.rounds; round++) rounds.push(await once(spec, spec.durationS));
  return rounds;
}

export interface LatencySpec {
  origin: string;
  paths: string[];
  headers: Record<string, string>;
  durationS: number;
  warmupS: number;
  rounds: number;
}

/**
 * One connection, one request at a time, each timed with the high-resolution clock (autocannon reports
 * whole milliseconds, too coarse to compare latencies of a few milliseconds).
 */
async function sequentialLatency(spec: LatencySpec): Promise<RoundResult[]> {
  const pool = new Pool(spec.origin, { connections: 1 });
  const once = async (durationS: number): Promise<RoundResult> => {
    const latencies: number[] = [];
    let failures = 0;
    const started = performance.now();
    const deadline = started + durationS * 1000;
    while (performance.now() < deadline) {
      const path = spec.paths[Math.floor(Math.random() * spec.paths.length)]!;
      const begin = performance.now();
      const response = await pool.request({ path, method: 'GET', headers: spec.headers });
      await response.body.dump();
      latencies.push(performance.now() - begin);
      if (response.statusCode !== 200) failures += 1;
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))]!;
    return {
      rps: latencies.length / seconds,
      p50: at(50),
      p99: at(99),
      max: latencies.at(-1)!,
      mean: latencies.reduce((sum, value) => sum + value, 0) / latencies.length,
      requests: latencies.length,
      non2xx: failures,
      errors: 0,
      timeouts: 0,
      statusCodes: {},
    };
  };
  if (spec.warmupS > 0) await once(spec.warmupS);
  const rounds: RoundResult[] = [];
  for (let round = 0; round < spec.rounds; round++) rounds.push(await once(spec.durationS));
  await pool.close();
  return rounds;
}

export interface UploadSpec {
  /** One upload per URL in each round, all at once. */
  urls: string[];
  token: string;
  sizeBytes: number;
  rounds: number;
}

export interface UploadResult {
  round: number;
  wallMs: number;
  statuses: Record<string, number>;
  latenciesMs: number[];
}

/** A multipart body of one PDF file of the given size (the bytes start like a PDF; the rest is filler). */
function multipartPdf(sizeBytes: number): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const pdf = Buffer.alloc(sizeBytes, 0x20);
  pdf.write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');
  randomBytes(Math.min(sizeBytes - 64, 1024 * 1024)).copy(pdf, 32);
  pdf.write('\n%%EOF\n', sizeBytes - 7, 'latin1');
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="label.pdf"\r\ncontent-type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, pdf, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** `urls.length` concurrent uploads per round. */
async function uploads(spec: UploadSpec): Promise<UploadResult[]> {
  const { body, contentType } = multipartPdf(spec.sizeBytes);
  const results: UploadResult[] = [];
  for (let round = 0; round < spec.rounds; round++) {
    const statuses: Record<string, number> = {};
    const latenciesMs: number[] = [];
    const started = performance.now();
    await Promise.all(
      spec.urls.map(async (url) => {
        const begin = performance.now();
        const response = await request(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${spec.token}`,
            'content-type': contentType,
            'content-length': String(body.length),
          },
          body,
        });
        await response.body.dump();
        latenciesMs.push(performance.now() - begin);
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      }),
    );
    results.push({ round, wallMs: performance.now() - started, statuses, latenciesMs });
  }
  return results;
}

export interface ReceiverLoadSpec {
  url: string;
  ca: string;
  concurrency: number;
  durationS: number;
  bodyBytes: number;
}

/** B3, the receiver's limit: `concurrency` requests in flight over HTTPS to the receiver, nothing else. */
async function receiverLoad(spec: ReceiverLoadSpec): Promise<{ rps: number; requests: number }> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, {
    connections: spec.concurrency,
    connect: { ca: spec.ca, servername: url.hostname },
  });
  const body = Buffer.from(
    JSON.stringify({
      id: 'evt_bench',
      occurredAt: new Date().toISOString(),
      pad: 'x'.repeat(Math.max(0, spec.bodyBytes - 60)),
    }),
  );
  let requests = 0;
  const deadline = performance.now() + spec.durationS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      while (performance.now() < deadline) {
        const response = await pool.request({
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await response.body.dump();
        requests += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return { rps: requests / elapsed, requests };
}

serveRequests(async (message) => {
  switch (message.type) {
    case 'http':
      return httpLoad(message.spec as HttpLoadSpec);
    case 'latency':
      return sequentialLatency(message.spec as LatencySpec);
    case 'uploads':
      return uploads(message.spec as UploadSpec);
    case 'receiver':
      return receiverLoad(message.spec as ReceiverLoadSpec);
    default:
      throw new Error(`unknown load ${message.type}`);
  }
});
