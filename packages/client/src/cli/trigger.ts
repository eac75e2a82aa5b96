/**
 * `svc trigger <visit-id> <action> [name=value ...]`: runs one of the sandbox simulator's actions on a
 * visit (POST /api/v1/sandbox/site-visits/{id}/simulate), so that the whole webhook loop runs from the
 * command line. `name=value` pairs become members of the body (e.g. scheduledDate=2026-12-02). Prints
 * the visit's new status and the events recorded, one per line.
 */
import type { SiteServicesClient } from '../client.js';
import { ApiError, toProblem } from '../errors.js';
import { UsageError } from './credentials.js';

const PATH = '/api/v1/sandbox/site-visits/{id}/simulate';

export async function triggerCommand(
  positionals: string[],
  client: SiteServicesClient,
  usage: string,
): Promise<number> {
  const [visitId, action, ...pairs] = positionals;
  if (!visitId || !action) throw new UsageError(usage);
  const body: Record<string, string> = { action };
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`svc trigger: "${pair}" is not name=value\n${usage}`);
    body[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const result = await client.api.POST(PATH, { params: { path: { id: visitId } }, body: body as never });
  if (!result.response.ok) {
    const problem = toProblem(result.response.status, result.error, result.response.statusText);
    const error = new ApiError(problem, 'POST', PATH.replace('{id}', visitId), result.response.headers);
    process.stderr.write(`svc: ${error.message}\n`);
    return 1;
  }
  const { data, meta } = result.data!;
  process.stdout.write(`${data.id}: ${data.attributes.status}\n`);
  for (const event of meta.events) process.stdout.write(`  ${event.type} ${event.id}\n`);
  return 0;
}
