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

export interface HeldSleep {
  ms: number;
  /** The signal the client gave the sleep, if any. */
  signal: AbortSignal | undefined;
  /** Ends the wait, as its time running out would. */
  release: () => void;
}

/**
 * Sleeps that end only when the test releases them: a wait the client must be able to leave on its own (an
 * abort) is then never ended by the clock. They ignore their signal, as an injected runtime may. `started(n)`
 * resolves once n waits have begun.
 */
export function heldSleeps(): {
  sleeps: HeldSleep[];
  runtime: ClientOptions['runtime'];
  started(count?: number): Promise<void>;
} {
  const sleeps: HeldSleep[] = [];
  const watchers: Array<() => void> = [];
  const runtime: ClientOptions['runtime'] = {
    sleep: (ms, signal) =>
      new Promise<void>((release) => {
        sleeps.push({ ms, signal, release });
        for (const watcher of watchers.splice(0)) watcher();
      }),
  };
  const started = (count = 1) =>
    new Promise<void>((resolve) => {
      const check = () => (sleeps.length >= count ? resolve() : watchers.push(check));
      check();
    });
  return { sleeps, runtime, started };
}
