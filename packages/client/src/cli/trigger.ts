/**
 * `svc trigger <visit-id> <action> [name=value | name:=json ...]`: runs one of the sandbox simulator's
 * actions on a visit (POST /api/v1/sandbox/site-visits/{id}/simulate), so that the whole webhook loop runs
 * from the command line. Prints the visit's new status and the events recorded, one per line.
 *
 * Each pair becomes a member of the body in the type the action's schema declares (MEMBERS, checked
 * against the generated types): `name=value` is text for a text member and `true`/`false` for a boolean
 * one (`complete` needs `qualityReviewPassed: true`, a JSON boolean); `name:=json` sends the JSON value
 * as written, which is how a nullable member gets null (`fieldRepName:=null` clears the rep). `name=null`
 * on a nullable member is refused rather than guessed: "null" is also a name a rep may have.
 */
import type { SiteServicesClient } from '../client.js';
import { ApiError, toProblem } from '../errors.js';
import type { paths } from '../generated/api.js';
import { UsageError } from './credentials.js';
import { writeRefusal } from './refusal.js';

const PATH = '/api/v1/sandbox/site-visits/{id}/simulate';

type SimulateBody = paths[typeof PATH]['post']['requestBody']['content']['application/json'];
/** What a member takes on the command line. */
type Kind = 'text' | 'boolean' | 'text or null';
type KindOf<T> = [T] extends [boolean]
  ? 'boolean'
  : [T] extends [string]
    ? 'text'
    : [T] extends [string | null]
      ? 'text or null'
      : never;
type Names<B> = Exclude<keyof B, 'action'>;
// An action without members gets Record<string, never>: `{}` would let any member through unchecked.
type MembersOf<B> = [Names<B>] extends [never]
  ? Record<string, never>
  : { [K in Names<B>]-?: KindOf<Exclude<B[K], undefined>> };

/**
 * The members of each action and their kinds. Typed from the service's schema, so that a member added,
 * removed or retyped there fails the build here instead of being sent as the wrong type.
 */
const MEMBERS: { [A in SimulateBody['action']]: MembersOf<Extract<SimulateBody, { action: A }>> } = {
  'assign-rep': { fieldRepName: 'text or null' },
  schedule: { scheduledDate: 'text', etaTime: 'text or null' },
  dispatch: {},
  complete: { qualityReviewPassed: 'boolean' },
  'transmit-deliverables': { notes: 'text or null' },
  'complete-lifecycle': {},
};

function kindOf(action: string, name: string): Kind | undefined {
  const members = (MEMBERS as Record<string, Record<string, Kind>>)[action];
  return members && Object.hasOwn(members, name) ? members[name] : undefined;
}

function fits(kind: Kind, value: unknown): boolean {
  if (kind === 'boolean') return typeof value === 'boolean';
  return typeof value === 'string' || (kind === 'text or null' && value === null);
}

/** One pair as a body member. A member this svc does not know goes as text, for the service to judge. */
function bodyMember(action: string, pair: string): [string, unknown] {
  const at = pair.indexOf('=');
  const json = at > 0 && pair[at - 1] === ':';
  const name = at > 0 ? pair.slice(0, json ? at - 1 : at) : '';
  if (name === '') throw new UsageError(`svc trigger: "${pair}" is not name=value or name:=json`);
  if (name === 'action') throw new UsageError('svc trigger: the action is the second argument, not a pair');
  const text = pair.slice(at + 1);
  const kind = kindOf(action, name);
  if (json) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UsageError(`svc trigger: ${name}:= takes a JSON value (e.g. ${name}:=null), got ${text}`);
    }
    if (kind && !fits(kind, value)) throw new UsageError(`svc trigger: ${action}'s ${name} takes ${kind}, got ${text}`);
    return [name, value];
  }
  if (kind === 'boolean') {
    if (text === 'true' || text === 'false') return [name, text === 'true'];
    throw new UsageError(`svc trigger: ${name} takes true or false, got "${text}"`);
  }
  if (kind === 'text or null' && text === 'null') {
    throw new UsageError(
      `svc trigger: ${name}=null is ambiguous: ${name}:=null sends null, ${name}:='"null"' the text "null"`,
    );
  }
  return [name, text];
}

export async function triggerCommand(
  positionals: string[],
  clientOf: () => SiteServicesClient,
  usage: string,
): Promise<number> {
  const [visitId, action, ...pairs] = positionals;
  // `svc trigger $VISIT complete-lifecycle` with VISIT empty (the create that set it failed) reaches here
  // as the action alone.
  if (visitId && !action && Object.hasOwn(MEMBERS, visitId))
    throw new UsageError(
      `svc trigger: ${visitId} is an action: the visit id comes first (svc trigger <visit-id> ${visitId}); ` +
        'an empty variable in its place (VISIT=$(curl …) when the create failed) leaves it out\n' +
        usage,
    );
  if (!visitId || !action) throw new UsageError(usage);
  const body: Record<string, unknown> = { action };
  for (const pair of pairs) {
    const [name, value] = bodyMember(action, pair);
    body[name] = value;
  }
  // The arguments are checked first: a usage error is said as one, with or without credentials.
  const result = await clientOf().api.POST(PATH, { params: { path: { id: visitId } }, body: body as never });
  if (!result.response.ok) {
    const problem = toProblem(result.response.status, result.error, result.response.statusText);
    const error = new ApiError(problem, 'POST', PATH.replace('{id}', visitId), result.response.headers);
    writeRefusal(error);
    return 1;
  }
  const { data, meta } = result.data!;
  process.stdout.write(`${data.id}: ${data.attributes.status}\n`);
  for (const event of meta.events) process.stdout.write(`  ${event.type} ${event.id}\n`);
  return 0;
}
