/**
 * The answered requests' count and latency by method, route template and status: `http_requests_total` and
 * `http_request_duration_seconds`, in a process's registry.
 *
 * prom-client's `inc` and `observe` make a string of the labels at every call and look it up in an object
 * (V8 interns each such string first): about half a microsecond a request for the two, in the hook every
 * request passes. Here a request adds to the numbers of its series, found by three map lookups on values the
 * router and Node keep (no string made), and the registry reads the series when scraped: the counter as a
 * prom-client Counter filled at collection, the histogram as an object answering what prom-client's Histogram
 * answers (its buckets cumulative, `le` first), so the text, the JSON and a cluster's sum are the same.
 */
import { Counter, type Metric, type Registry } from 'prom-client';

type Label = 'method' | 'route' | 'status';

/** A sample as prom-client's metrics answer `get` (its types declare no such shape for a metric of ours). */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

interface Series {
  labels: Record<Label, string>;
  count: number;
  sum: number;
  /** Answers per bucket (not cumulative), the last for those slower than every bound (`+Inf`). */
  perBucket: Float64Array;
}

const LABELS: Label[] = ['method', 'route', 'status'];
const COUNTER = 'http_requests_total';
const HISTOGRAM = 'http_request_duration_seconds';

export class RequestSeries {
  /** By route template, method and status code. */
  private readonly index = new Map<string, Map<string, Map<number, Series>>>();
  private series: Series[] = [];

  /** @param bounds the histogram's bucket bounds in seconds, ascending */
  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const series = () => this.series;
    new Counter({
      name: COUNTER,
      help: 'HTTP requests answered, by route template (unmatched: no route), method and status.',
      labelNames: LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, count } of series()) this.inc(labels, count);
      },
    });
    registry.registerMetric(this.histogram() as unknown as Metric);
  }

  /** One answered request. */
  record(method: string, route: string, status: number, seconds: number): void {
    const series = this.index.get(route)?.get(method)?.get(status) ?? this.add(method, route, status);
    series.count++;
    series.sum += seconds;
    // As prom-client: a value equal to a bound is in that bound's bucket.
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.perBucket[bucket]!++;
  }

  /** A series' first request. */
  private add(method: string, route: string, status: number): Series {
    const series: Series = {
      labels: { method, route, status: String(status) },
      count: 0,
      sum: 0,
      perBucket: new Float64Array(this.bounds.length + 1),
    };
    const byMethod = this.index.get(route) ?? new Map<string, Map<number, Series>>();
    const byStatus = byMethod.get(method) ?? new Map<number, Series>();
    byStatus.set(status, series);
    byMethod.set(method, byStatus);
    this.index.set(route, byMethod);
    this.series.push(series);
    return series;
  }

  /** The histogram as the registry reads a metric: `get` and `reset` (prom-client's Histogram's values). */
  private histogram() {
    const name = HISTOGRAM;
    const help = 'Time from receiving a request to sending its answer.';
    const values = (): Sample[] =>
      this.series.flatMap(({ labels, count, sum, perBucket }) => {
        let cumulative = 0;
        const buckets = this.bounds.map((bound, index) => {
          cumulative += perBucket[index]!;
          return { labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` };
        });
        return [
          ...buckets,
          { labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` },
          { labels, value: sum, metricName: `${name}_sum` },
          { labels, value: count, metricName: `${name}_count` },
        ];
      });
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: values() }),
      reset: () => {
        this.index.clear();
        this.series = [];
      },
    };
  }
}
