/**
 * Requests whose header lines give them two meanings are refused before anything reads them.
 *
 * Node keeps the first of two Host, Authorization or Content-Type lines and silently drops the other (its
 * rule for fields that may be sent once); a proxy, gateway or body filter in front of the service may read the
 * other one, and then authenticate, route or inspect a request that is not the one the service answers (a
 * JSON body passed by a filter as the `text/plain` of the second line). RFC 9112 §3.2 asks a server to refuse
 * two Host lines with 400; RFC 9110 §5.3 forbids sending any field twice that is not a list. Node joins two
 * Idempotency-Key lines into one value `a, b`, which the key's format refused without saying why.
 *
 * Node's parser also hands over a body whose Transfer-Encoding names a coding before `chunked` (`gzip,
 * chunked`, or two lines) with only the chunked framing removed: the gzip bytes were read as JSON or stored
 * as a file, and a proxy that frames such a body otherwise is the usual start of request smuggling. Only
 * `chunked` is understood here; the parser itself refuses `gzip` alone (400), so other codings are refused
 * the same way (RFC 9112 §6.1).
 *
 * Both are 400 malformed-request naming the header, with `Connection: close`: nothing more is read from a
 * connection whose framing or purpose is in doubt.
 */
import type { FastifyRequest } from 'fastify';
import type { Api } from './types.js';
import { Problem } from './problem.js';
import { nameOrWhy } from './request-names.js';

/**
 * Fields this service reads that may be sent once: lower-cased, and as documented. Matched without lower-casing
 * the raw names (every request has a Host line): this hook allocates nothing for a request it lets through.
 */
const SINGLE_FIELDS = [
  { name: 'host', shown: 'Host' },
  { name: 'authorization', shown: 'Authorization' },
  { name: 'content-type', shown: 'Content-Type' },
  { name: 'idempotency-key', shown: 'Idempotency-Key' },
] as const;

/** Whether a raw header name is `lower`, ASCII letters of either case. */
function isNamed(raw: string, lower: string): boolean {
  if (raw.length !== lower.length) return false;
  for (let index = 0; index < lower.length; index++) {
    const code = raw.charCodeAt(index);
    if ((code >= 0x41 && code <= 0x5a ? code | 0x20 : code) !== lower.charCodeAt(index)) return false;
  }
  return true;
}

/** The documented name of a field sent on more than one line, or undefined. */
function repeatedField(rawHeaders: readonly string[]): string | undefined {
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const raw = rawHeaders[index]!;
    for (let field = 0; field < SINGLE_FIELDS.length; field++) {
      if (!isNamed(raw, SINGLE_FIELDS[field]!.name)) continue;
      if (seen & (1 << field)) return SINGLE_FIELDS[field]!.shown;
      seen |= 1 << field;
      break;
    }
  }
  return undefined;
}

function refusal(request: FastifyRequest): Problem | undefined {
  const coding = request.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    return new Problem(
      'malformed-request',
      `Transfer-Encoding ${nameOrWhy(coding, 'with a coding', true)} is not supported: send the body with Content-Length or Transfer-Encoding: chunked alone.`,
      { headers: { connection: 'close' } },
    );
  }
  const field = repeatedField(request.raw.rawHeaders);
  if (field === undefined) return undefined;
  return new Problem('malformed-request', `The request has more than one ${field} header line: send it once.`, {
    headers: { connection: 'close' },
  });
}

export function registerHeaderLineRefusal(app: Api): void {
  app.addHook('onRequest', (request, _reply, done) => done(refusal(request)));
}
