/**
 * Runs `svc` (its `main`) in this process against a test app, its answers contract-checked like every
 * client's; returns the exit code and what it printed. `requests` records the method and path of each
 * request it sends, `posts` each POST's path, Idempotency-Key and body. Shared by the client tests that drive
 * the command line without a child process.
 */
import { main } from '@site-services/client/cli';
import { vi } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { contractCheckedFetch } from '../helpers/client.js';

export interface SentPost {
  path: string;
  key: string | null;
  body: Record<string, unknown>;
}

export async function runSvcInProcess(
  t: TestApp,
  args: string[],
  env: NodeJS.ProcessEnv,
  requests: string[] = [],
  posts: SentPost[] = [],
) {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(args, env, {
      fetch: contractCheckedFetch(t, async (request) => {
        const path = new URL(request.url).pathname;
        requests.push(`${request.method} ${path}`);
        if (request.method === 'POST' && !path.endsWith('/oauth/token'))
          posts.push({
            path,
            key: request.headers.get('idempotency-key'),
            body: (await request.clone().json()) as Record<string, unknown>,
          });
        return fetch(request);
      }),
    });
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
