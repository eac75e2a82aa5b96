/** What one delivery attempt came to, for any delivery target (a subscription's URL or a listener's stream). */
export type Verdict =
  | { outcome: 'succeeded'; statusCode: number }
  | { outcome: 'retry'; statusCode: number | null; error: string }
  | { outcome: 'failed'; statusCode: number | null; error: string };

/** The receiver's status as a verdict: 2xx succeeds, a redirect fails at once (never followed), anything else is retried. */
export function verdictForStatus(statusCode: number): Verdict {
  if (statusCode >= 200 && statusCode < 300) return { outcome: 'succeeded', statusCode };
  if (statusCode >= 300 && statusCode < 400)
    return { outcome: 'failed', statusCode, error: `redirect (HTTP ${statusCode}) not followed` };
  return { outcome: 'retry', statusCode, error: `HTTP ${statusCode}` };
}
