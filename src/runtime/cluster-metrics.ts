/**
 * GET /metrics on the main port of a cluster (WEB_CONCURRENCY above 1). The port is shared, so a scrape
 * reaches whichever child took the connection; answering that child's registry gave one child's counts
 * (half the requests with two), a different child's on the next connection, so counters seemed to go back
 * and rates were wrong. A child asks its primary instead, which answers the sum METRICS_PORT serves.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';

/** How a metrics listener reads the text: one process's registry, or a cluster primary's aggregate. */
export type MetricsSource = () => Promise<{ contentType: string; body: string }>;

const REQUEST = 'site-services:metrics-request';
const REPLY = 'site-services:metrics-reply';
/** Longer than the primary's own wait for its children (prom-client: 5 s) and the database gauges (2 s). */
const ANSWER_LIMIT_MS = 8_000;

interface Reply {
  type: typeof REPLY;
  id: string;
  contentType?: string;
  body?: string;
  error?: string;
}

/** In the cluster primary: answers each child's request with `source` (the children's sum). */
export function answerChildrenWithClusterMetrics(source: MetricsSource): void {
  cluster.on('message', (child, message: { type?: string; id?: string } | undefined) => {
    if (message?.type !== REQUEST || typeof message.id !== 'string') return;
    const { id } = message;
    const send = (reply: Reply) => {
      if (child.isConnected()) child.send(reply);
    };
    source().then(
      (text) => send({ type: REPLY, id, ...text }),
      (error: unknown) => send({ type: REPLY, id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/** In a cluster child: the cluster's metrics, asked of the primary. */
export function primaryMetricsSource(): MetricsSource {
  const waiting = new Map<string, (reply: Reply) => void>();
  process.on('message', (message: Reply | undefined) => {
    if (message?.type === REPLY) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(
        () => settle({ type: REPLY, id, error: 'no answer from the cluster primary' }),
        ANSWER_LIMIT_MS,
      );
      function settle(reply: Reply) {
        clearTimeout(timer);
        waiting.delete(id);
        if (reply.body !== undefined && reply.contentType !== undefined)
          resolve({ contentType: reply.contentType, body: reply.body });
        else reject(new Error(`cluster metrics: ${reply.error ?? 'no text'}`));
      }
      waiting.set(id, settle);
      process.send!({ type: REQUEST, id });
    });
}
