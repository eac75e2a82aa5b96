/**
 * The health answers of a ROLE=worker process. It has no API port, so an orchestrator could only watch the
 * process itself: one whose delivery loop had stopped or that could not reach the database looked alive. It
 * answers on METRICS_PORT (its only listener), beside /metrics, the API's two probes (src/http/operations.ts),
 * with the same bodies: GET /health, the process answers (liveness, nothing read); GET /ready, the database
 * answers `select 1` within 2 s and the delivery worker is running (started, not stopping), else 503
 * service-unavailable with Retry-After: 5 and what is wrong (the database's own message when it refused: the
 * listener is on a private network, and the message is what an operator acts on).
 */
import type http from 'node:http';
import { sql } from 'kysely';
import type { AppDatabase } from '../db/database.js';
import { Problem, problemBody } from '../http/problem.js';
import { DATABASE_READ_LIMIT_MS, type OtherAnswers, within } from './metrics.js';

export interface WorkerProbeDeps {
  database: Pick<AppDatabase, 'db'>;
  worker: { readonly running: boolean };
  problemBaseUrl: string;
  /** How long /ready waits for the database (a probe's own timeout is often 1 s or a few). */
  databaseLimitMs?: number;
}

/** What keeps the worker from being ready; empty when it is. */
export async function workerUnreadiness(deps: WorkerProbeDeps): Promise<string[]> {
  const limit = deps.databaseLimitMs ?? DATABASE_READ_LIMIT_MS;
  // A refusal is told apart from silence: a database that refuses at once (a connection limit, a database
  // closed to connections, a wrong password) was reported as no answer within the limit, sending an operator
  // after a slow or unreachable server instead of its message.
  const failed = await within(
    limit,
    sql`select 1`.execute(deps.database.db).then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300) || 'no message',
    ),
  );
  return [
    ...(deps.worker.running ? [] : ['The delivery worker is not running (starting or stopping).']),
    ...(failed === undefined ? [`The database is not reachable (no answer to select 1 within ${limit} ms).`] : []),
    ...(failed !== null && failed !== undefined ? [`The database is not reachable (select 1 failed: ${failed}).`] : []),
  ];
}

export function workerProbes(deps: WorkerProbeDeps): OtherAnswers {
  const json = (response: http.ServerResponse, status: number, body: unknown, headers = {}) =>
    response
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
      .end(JSON.stringify(body));
  return (path, response) => {
    if (path === '/health') {
      json(response, 200, { status: 'ok' });
      return true;
    }
    if (path !== '/ready') return false;
    workerUnreadiness(deps).then((reasons) => {
      if (reasons.length === 0) return json(response, 200, { status: 'ready' });
      const problem = new Problem('service-unavailable', reasons.join(' '), { headers: { 'retry-after': '5' } });
      json(response, problem.status, problemBody(problem, deps.problemBaseUrl), {
        ...problem.headers,
        'content-type': 'application/problem+json; charset=utf-8',
      });
    });
    return true;
  };
}
