/**
 * Stand-ins for what the client's transport talks to, so its retry rules can be watched without the waits:
 * a fetch that records every request (and may answer some itself), sleeps recorded instead of waited, and a
 * problem answer as the service gives one.
 */
import type { ClientOptions, FetchLike } from '@site-services/client';

/** A fetch that records each request and may answer in place of the service. */
export function recordingFetch(
  answer: (request: Request, index: number) => Response | Error | undefined = () => undefined,
) {
  const requests: Request[] = [];
  const fetchLike: FetchLike = async (request) => {
    const index = requests.push(request.clone()) - 1;
    const substitute = answer(request, index);
    if (substitute instanceof Error) throw substitute;
    return substitute ?? fetch(request);
  };
  const paths = () => requests.map((request) => `${request.method} ${new URL(request.url).pathname}`);
  return { fetch: fetchLike, requests, paths };
}

/** Sleeps recorded, not waited; the client's clock moves on by them (as the pacer expects of a sleep). */
export function recordedSleeps(): { sleeps: number[]; runtime: ClientOptions['runtime'] } {
  const sleeps: number[] = [];
  let slept = 0;
  return {
    sleeps,
    runtime: {
      now: () => Date.now() + slept,
      sleep: async (ms) => {
        sleeps.push(ms);
        slept += ms;
      },
    },
  };
}

/** A problem answer as the service gives one (application/problem+json), for a fetch to answer with. */
export const problem = (status: number, slug: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: `http://x/problems/${slug}`, title: slug, status, detail: slug }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
