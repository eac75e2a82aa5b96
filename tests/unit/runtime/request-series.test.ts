/** The request series answer the registry exactly what prom-client's own Counter and Histogram would. */
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestSeries } from '../../../src/runtime/request-series.js';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1];
const LABELS = ['method', 'route', 'status'] as const;

type Answer = [method: string, route: string, status: number, seconds: number];

/** The same answers recorded by prom-client's metrics (the reference) and by `RequestSeries`. */
function bothRegistries(answers: Answer[]) {
  const reference = new Registry();
  const counter = new Counter({ name: 'http_requests_total', help: 'x', labelNames: LABELS, registers: [reference] });
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'x',
    labelNames: LABELS,
    buckets: BOUNDS,
    registers: [reference],
  });
  const ours = new Registry();
  const series = new RequestSeries(ours, BOUNDS);
  for (const [method, route, status, seconds] of answers) {
    const labels = { method, route, status: String(status) };
    counter.inc(labels);
    histogram.observe(labels, seconds);
    series.record(method, route, status, seconds);
  }
  return { reference, ours };
}

/** The text without the HELP lines (the reference's help texts are placeholders). */
const samples = async (registry: Pick<Registry, 'metrics'>) =>
  (await registry.metrics())
    .split('\n')
    .filter((line) => !line.startsWith('# HELP'))
    .join('\n');

const ANSWERS: Answer[] = [
  ['GET', '/api/v1/sites/:id', 200, 0.004],
  ['GET', '/api/v1/sites/:id', 200, 0.005],
  ['GET', '/api/v1/sites/:id', 404, 0.02],
  ['POST', '/api/v1/sites', 201, 0.3],
  ['GET', '/api/v1/sites/:id', 200, 0.05],
  ['GET', 'unmatched', 404, 0.001],
];

describe('RequestSeries', () => {
  it('answers the text prom-client would: counts, cumulative buckets (a bound holds its equal), sums', async () => {
    const { reference, ours } = bothRegistries(ANSWERS);
    expect(await samples(ours)).toBe(await samples(reference));
    expect(await ours.metrics()).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/sites/:id",status="200"} 2',
    );
  });

  it('answers the JSON a cluster primary sums as prom-client would', async () => {
    const first = bothRegistries(ANSWERS);
    const second = bothRegistries(ANSWERS.slice(2));
    const sum = async (registries: Registry[]) =>
      AggregatorRegistry.aggregate(await Promise.all(registries.map((registry) => registry.getMetricsAsJSON())));
    expect(await samples(await sum([first.ours, second.ours]))).toBe(
      await samples(await sum([first.reference, second.reference])),
    );
  });

  it('starts again from nothing when the registry is reset', async () => {
    const { ours } = bothRegistries(ANSWERS);
    ours.resetMetrics();
    expect(await samples(ours)).toBe(
      '# TYPE http_requests_total counter\n\n# TYPE http_request_duration_seconds histogram\n',
    );
  });
});
