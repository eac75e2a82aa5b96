/**
 * The webhook verification snippets of the API reference (examples/webhook-verification/: Python, Java, shell
 * with OpenSSL), run as integrators would run them on real deliveries of the service: a subscription to a local
 * HTTPS receiver (the test-destination allowance), visits created through the API, the delivery worker's POSTs
 * as received. Each snippet must accept the genuine delivery and refuse it tampered, under another secret, with
 * a stale timestamp, and a legacy one; the Python and Java ones take the two secrets of a rotation. The client
 * package's verifyWebhook judges every case the same way. The reference shows each file whole.
 *
 * The stale deliveries are real ones too: the app runs 10 minutes behind, so a worker on the app's clock signs
 * with a timestamp 10 minutes old, a worker 10 minutes ahead of the real clock with one 10 minutes in the
 * future, and the worker on the real clock signs the fresh ones.
 *
 * python3, java (17+, single-file source launch) and bash with openssl are on the CI machine: there a missing
 * one fails the test; elsewhere its cases are skipped, saying so.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { verifyWebhook } from '@site-services/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import {
  VERIFICATION_DIRECTORY,
  VERIFICATION_SNIPPETS,
  verificationSnippet,
} from '../../src/modules/docs/verification-snippets.js';
import type { DeliveryWorker } from '../../src/modules/outbox/worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../helpers/tenants.js';
import { createVisit, type VisitTenant, visitTenant } from '../helpers/visits.js';
import {
  createTestWorker,
  type Endpoint,
  localResolver,
  TestReceiver,
  testWebhookConfig,
} from '../helpers/webhooks.js';

const run = promisify(execFile);

/** Characters a careless receiver mangles: non-ASCII (UTF-8 key bytes), spaces, quotes, a shell's `$`. */
const SECRET = 'snippet secrét ✓ "$HOME" 0123';
const NEW_SECRET = 'rotated secret, long enough ✓';
const BEHIND_MS = 10 * 60_000;

interface Delivery {
  /** The header lines as they arrived (names as sent). */
  headers: [string, string][];
  body: Buffer;
}

interface Case {
  name: string;
  delivery: Delivery;
  secrets: string | string[];
  /** 'accepted', or what the refusal's message says. */
  expected: 'accepted' | RegExp;
}

let receiver: TestReceiver;
let t: TestApp;
let fresh: DeliveryWorker;
let behind: DeliveryWorker;
let ahead: DeliveryWorker;
let workDirectory: string;
let cases: Case[];

/** The delivery with its header names as many servers show them (X-Svc-Signature): the snippets ignore case. */
function asDelivery(request: { headers: IncomingHttpHeaders; body: Buffer }): Delivery {
  const headers = Object.entries(request.headers).map(
    ([name, value]) => [name.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase()), String(value)] as [string, string],
  );
  return { headers, body: request.body };
}

function headerOf(delivery: Delivery, name: string): string {
  return delivery.headers.find(([sent]) => sent.toLowerCase() === name)?.[1] ?? '';
}
const eventIdOf = (delivery: Delivery) => headerOf(delivery, 'x-svc-event-id');
const signatureOf = (delivery: Delivery) => headerOf(delivery, 'x-svc-signature');

/** The headers as Node gives them to verifyWebhook: names in lower case, a repeated one as a list. */
function nodeHeaders(delivery: Delivery): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of delivery.headers) {
    const key = name.toLowerCase();
    const earlier = headers[key];
    headers[key] = earlier === undefined ? value : [earlier, value].flat();
  }
  return headers;
}

/** Creates a visit (its ticket.created event) and lets `worker` deliver it: the delivery as `endpoint` got it. */
async function deliveredVisit(v: VisitTenant, worker: DeliveryWorker, endpoint: Endpoint): Promise<Delivery> {
  const before = endpoint.requests.length;
  await createVisit(t, v);
  await worker.processAll();
  const [request] = await endpoint.waitFor(before + 1).then((requests) => requests.slice(before));
  return asDelivery(request!);
}

async function subscribe(v: VisitTenant, endpoint: Endpoint, secret: string): Promise<string> {
  const created = await t.http.post('/api/v1/webhook-subscriptions', {
    token: v.fullToken,
    json: { targetUrl: endpoint.url, eventTypes: ['ticket.created'], secret },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id;
}

beforeAll(async () => {
  receiver = await TestReceiver.start();
  const appClock: Clock = { now: () => new Date(Date.now() - BEHIND_MS) };
  t = await startTestApp({
    config: { webhook: testWebhookConfig(receiver.port) },
    resolver: localResolver,
    clock: appClock,
  });
  fresh = createTestWorker(t, receiver);
  behind = createTestWorker(t, receiver, { deps: { clock: appClock } });
  ahead = createTestWorker(t, receiver, { deps: { clock: { now: () => new Date(Date.now() + BEHIND_MS) } } });
  const v = await visitTenant(t, { assets: 0 });

  const endpoint = receiver.endpoint();
  const subscriptionId = await subscribe(v, endpoint, SECRET);
  const genuine = await deliveredVisit(v, fresh, endpoint);
  const stale = await deliveredVisit(v, behind, endpoint);
  const early = await deliveredVisit(v, ahead, endpoint);
  const rotated = await t.http.patch(`/api/v1/webhook-subscriptions/${subscriptionId}`, {
    token: v.fullToken,
    json: { secret: NEW_SECRET },
  });
  expect(rotated.status, rotated.text).toBe(200);
  const afterRotation = await deliveredVisit(v, fresh, endpoint);
  const legacyEndpoint = receiver.endpoint();
  // The legacy subscription alone gets the next event.
  const deactivated = await t.http.patch(`/api/v1/webhook-subscriptions/${subscriptionId}`, {
    token: v.fullToken,
    json: { isActive: false },
  });
  expect(deactivated.status, deactivated.text).toBe(200);
  const legacy = await admin(t, 'POST', `/admin/v1/tenants/${v.tenantId}/webhook-subscriptions`, {
    targetUrl: legacyEndpoint.url,
    eventTypes: ['ticket.created'],
  });
  expect(legacy.status, legacy.text).toBe(201);
  const legacyDelivery = await deliveredVisit(v, fresh, legacyEndpoint);

  const reserialised = JSON.stringify(JSON.parse(genuine.body.toString('utf8')), null, 1);
  cases = [
    { name: 'genuine', delivery: genuine, secrets: SECRET, expected: 'accepted' },
    {
      name: 'tampered',
      delivery: { ...genuine, body: Buffer.from(reserialised) },
      secrets: SECRET,
      expected: /does not match/,
    },
    { name: 'wrong-secret', delivery: genuine, secrets: NEW_SECRET, expected: /does not match/ },
    { name: 'stale', delivery: stale, secrets: SECRET, expected: /^stale/ },
    { name: 'ahead', delivery: early, secrets: SECRET, expected: /^stale/ },
    { name: 'rotated-old-secret', delivery: afterRotation, secrets: SECRET, expected: /does not match/ },
    { name: 'rotated-new-secret', delivery: afterRotation, secrets: NEW_SECRET, expected: 'accepted' },
    { name: 'rotated-both-secrets', delivery: afterRotation, secrets: [SECRET, NEW_SECRET], expected: 'accepted' },
    { name: 'legacy', delivery: legacyDelivery, secrets: SECRET, expected: /not v1/ },
    {
      // Sent twice, even with the genuine value: refused rather than picked from.
      name: 'signature-twice',
      delivery: { ...genuine, headers: [...genuine.headers, ['x-svc-signature', signatureOf(genuine)]] },
      secrets: SECRET,
      expected: /x-svc-signature is not lower-case hex/,
    },
  ];

  workDirectory = mkdtempSync(path.join(tmpdir(), 'verification-snippets-'));
  for (const { name, delivery, secrets } of cases) {
    writeFileSync(
      path.join(workDirectory, `${name}.headers`),
      delivery.headers.map(([k, v]) => `${k}: ${v}\r\n`).join(''),
    );
    writeFileSync(path.join(workDirectory, `${name}.body`), delivery.body);
    writeFileSync(path.join(workDirectory, `${name}.secrets`), [secrets].flat().join('\n'));
  }
  writeFileSync(
    path.join(workDirectory, 'cases.json'),
    JSON.stringify(cases.map(({ name, delivery, secrets }) => ({ name, secrets, headers: delivery.headers }))),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([fresh?.stop(), behind?.stop(), ahead?.stop()]);
  await t?.close();
  await receiver?.close();
  if (workDirectory) rmSync(workDirectory, { recursive: true, force: true });
});

/** Each case's outcome as a snippet printed it: `name accepted [event id]` or `name refused: message`. */
function outcomes(output: string): Record<string, string> {
  return Object.fromEntries(
    output
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]),
  );
}

function expectOutcomes(printed: Record<string, string>, judged: Case[]) {
  expect(Object.keys(printed).sort()).toEqual(judged.map(({ name }) => name).sort());
  for (const { name, delivery, expected } of judged) {
    if (expected === 'accepted') {
      expect(printed[name], name).toMatch(new RegExp(`^accepted( ${eventIdOf(delivery)})?$`));
    } else {
      expect(printed[name], name).toMatch(/^refused: /);
      expect(printed[name]!.slice('refused: '.length), name).toMatch(expected);
    }
  }
}

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Skipped (saying why) where a tool is missing, but never in CI: there it fails. */
function needs(...commands: string[]) {
  const missing = commands.filter((command) => !onPath(command));
  if (missing.length > 0 && process.env.CI === undefined) {
    console.warn(`verification snippets: skipped, ${missing.join(' and ')} not installed`);
    return { skip: true };
  }
  return { skip: false, missing };
}

function failIfMissing(requirement: ReturnType<typeof needs>) {
  if (requirement.missing?.length) throw new Error(`${requirement.missing.join(', ')} must be installed in CI`);
}

describe('webhook verification snippets on real deliveries', () => {
  it('the client package judges every case as the snippets must', () => {
    for (const { name, delivery, secrets, expected } of cases) {
      const verdict = () => verifyWebhook({ headers: nodeHeaders(delivery), rawBody: delivery.body, secret: secrets });
      if (expected === 'accepted') expect(verdict().id, name).toBe(eventIdOf(delivery));
      else expect(verdict, name).toThrow();
    }
  });

  const python = needs('python3');
  it.skipIf(python.skip)('Python: verify.py', { timeout: 30_000 }, async () => {
    failIfMissing(python);
    // The headers as http.server gives them (an email.message.Message: a repeated header is there twice).
    const driver = [
      'import json, sys',
      'from email.message import Message',
      'from verify import InvalidDelivery, verify',
      'for case in json.load(open(sys.argv[1])):',
      '    body = open(sys.argv[2] + "/" + case["name"] + ".body", "rb").read()',
      '    headers = Message()',
      '    for name, value in case["headers"]:',
      '        headers[name] = value',
      '    try:',
      '        print(case["name"], "accepted", verify(case["secrets"], headers, body)["id"])',
      '    except InvalidDelivery as refusal:',
      '        print(case["name"], "refused:", refusal)',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', driver, path.join(workDirectory, 'cases.json'), workDirectory], {
      env: { ...process.env, PYTHONPATH: VERIFICATION_DIRECTORY, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expectOutcomes(outcomes(stdout), cases);
  });

  const java = needs('java');
  it.skipIf(java.skip)('Java: Verify.java, every case in one JVM', { timeout: 60_000 }, async () => {
    failIfMissing(java);
    // A single-file launch runs the file's first class: the cases' driver comes first, then Verify.java unchanged
    // but for its imports, which a Java file must hold before any class.
    const snippet = verificationSnippet('Verify.java');
    const imports = snippet.split('\n').filter((line) => line.startsWith('import '));
    const rest = snippet.split('\n').filter((line) => !line.startsWith('import '));
    const driver = `
class VerifyCases {
  public static void main(String[] args) throws Exception {
    java.nio.file.Path dir = java.nio.file.Path.of(args[0]);
    for (int i = 1; i < args.length; i++) {
      String name = args[i];
      // A Map holds a name once: the repeated header is sent in another case (x-svc-signature, X-Svc-Signature).
      java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();
      for (String line : java.nio.file.Files.readAllLines(dir.resolve(name + ".headers"))) {
        int colon = line.indexOf(':');
        headers.put(line.substring(0, colon), line.substring(colon + 1).strip());
      }
      List<String> secrets = java.nio.file.Files.readAllLines(dir.resolve(name + ".secrets"));
      byte[] body = java.nio.file.Files.readAllBytes(dir.resolve(name + ".body"));
      try {
        Verify.verify(secrets, headers, body);
        System.out.println(name + " accepted");
      } catch (Verify.InvalidDelivery refusal) {
        System.out.println(name + " refused: " + refusal.getMessage());
      }
    }
  }
}
`;
    const launched = path.join(workDirectory, 'VerifyCases.java');
    writeFileSync(launched, [...imports, driver, ...rest].join('\n'));
    const { stdout } = await run('java', [launched, workDirectory, ...cases.map(({ name }) => name)]);
    expectOutcomes(outcomes(stdout), cases);
  });

  const shell = needs('bash', 'openssl');
  it.skipIf(shell.skip)('shell and OpenSSL: verify.sh, one secret at a time', { timeout: 30_000 }, async () => {
    failIfMissing(shell);
    const single = cases.filter(({ secrets }) => typeof secrets === 'string');
    const printed = await Promise.all(
      single.map(async ({ name, secrets }) => {
        const files = [`${name}.headers`, `${name}.body`].map((file) => path.join(workDirectory, file));
        const args = [path.join(VERIFICATION_DIRECTORY, 'verify.sh'), secrets as string, ...files];
        const outcome = await run('bash', args).then(
          ({ stdout }) => ({ code: 0, stdout }),
          (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
        );
        // The script's own words: "valid" and exit 0, or the reason and exit 1.
        const said = outcome.stdout.trim();
        if (outcome.code === 0 && said === 'valid') return [name, 'accepted'];
        return [name, outcome.code === 1 ? `refused: ${said}` : `exit ${outcome.code}: ${said}`];
      }),
    );
    expectOutcomes(Object.fromEntries(printed), single);
  });
});

describe('the API reference shows each snippet whole', () => {
  it.for(VERIFICATION_SNIPPETS.map(({ file }) => file))('%s', async (file) => {
    const document = await t.http.get('/api/v1/openapi.json');
    expect(document.status).toBe(200);
    const description: string = document.body.info.description;
    const language = VERIFICATION_SNIPPETS.find((snippet) => snippet.file === file)!.language;
    expect(description).toContain(`\`\`\`${language}\n${verificationSnippet(file).trimEnd()}\n\`\`\`\n`);
  });
});
