/**
 * What the two OpenAPI documents say beyond the routes: titles, the long descriptions (SPEC's rules and
 * the decisions on its open points, as integrators need them), tags, security schemes and webhooks.
 */
import type { Config } from '../../config.js';
import { ADMIN_SECURITY_SCHEME } from '../../http/admin-auth.js';
import { SECURITY_SCHEME } from '../../http/auth.js';
import { OPERATOR_PATHS } from '../../http/headers.js';
import { type OpenApiDefinitions, ownBaseUrl } from '../../http/openapi.js';
import { requestTimeoutText } from '../../http/openapi-implied.js';
import { problemTypesOf } from '../../http/problem-types.js';
import { ALL_SCOPES, SCOPE_DESCRIPTIONS } from '../auth/scopes.js';
import { EVENT_TYPES } from '../outbox/types.js';
import { eventWebhooks, WEBHOOK_TAG } from '../outbox/webhooks-openapi.js';
import { SANDBOX_TAG } from '../site-visits/sandbox-routes.js';
import { CLIENT_COMPONENTS, OPERATOR_COMPONENTS, SANDBOX_COMPONENTS } from './components.js';
import { problemExample, validationProblemExample } from './examples.js';
import { verificationSnippetBlocks } from './verification-snippets.js';

export const API_VERSION = '1.0.0';

export function problemTypeTable(config: Config): string {
  const rows = problemTypesOf(config.environment).map(
    ([slug, problem]) => `| ${problem.status} | [\`${slug}\`](${config.problemBaseUrl}/${slug}) | ${problem.title} |`,
  );
  return ['| Status | Type (slug) | Title |', '|---|---|---|', ...rows].join('\n');
}

function clientDescription(config: Config): string {
  const scopeRows = ALL_SCOPES.map((scope) => `| \`${scope}\` | ${SCOPE_DESCRIPTIONS[scope]} |`).join('\n');
  return `
A tenant-scoped API through which an approved client manages its sites, site visits (work orders), reference
lists (projects and items), messages, file uploads (return labels and message attachments) and webhook
subscriptions. Every record belongs to the client whose token makes the request; a caller never sends a
tenant id, and another client's record is simply not found (404).

Paths carry the \`/api/v1\` prefix and are appended to the base address of the environment: production and
sandbox (see servers) have the same paths and **separate credentials**; a token of one is not valid on the
other. Request bodies are flat JSON objects (no \`data\` wrapper); responses use the envelope below.

## Getting started

1. Obtain a token: \`POST /api/v1/oauth/token\` with \`grant_type=client_credentials\`, your \`client_id\` and
   \`client_secret\` (JSON or form-encoded). Never send the secret from browser code.
2. Send it as \`Authorization: Bearer <access_token>\` on every other request. Tokens are JWTs valid for
   \`expires_in\` seconds; cache and reuse them. After a 401, fetch a fresh token once; a repeated 401 means
   the credentials are wrong.
3. Create a site (\`POST /api/v1/sites\`), then a site visit for it, optionally assigning site assets; look the
   visit up by your ticket number; add a message.

## Scopes

A token carries the scopes requested (all the client's scopes when \`scope\` is omitted). Each operation names
the scope it needs; a token without it gets 403 \`forbidden\`.

| Scope | Grants |
|---|---|
${scopeRows}

Sites use \`sites:read\` (GET) and \`sites:write\` (POST, PATCH). Site visits and their return labels, and
messages with their attachments, use \`site-visits:read\` (GET) and \`site-visits:write\` (POST, PATCH,
uploads): there are no separate message scopes. Reference lists (projects, items) need \`site-visits:read\`. A visit read with a token
lacking \`site-visits:read\` (a write-only token) leaves out \`assetsToService\` and \`siteVisitAssets\`.
Webhook subscriptions use \`webhooks:read\` (list) and \`webhooks:write\` (create, patch).

## Resources, versions and ETags

A single resource is \`{data: {id, type, attributes, meta: {version, etag}}}\`; a list is
\`{data: [...], meta: {pageSize, nextCursor?}}\`. Ids are opaque strings with a prefix (\`site_\`, \`visit_\`,
\`msg_\`). \`meta.version\` grows by exactly 1 with every change of the resource, including changes made by the
operator's workflow; \`meta.etag\` is the quoted version (\`"3"\`), also sent as the \`ETag\` header of 201 and
200 responses of sites, site visits and messages. Responses carry every attribute; an optional attribute
without a value is \`null\`. Timestamps are ISO 8601 date-times in UTC with milliseconds.

## Request rules

- Unknown members and read-only members (\`clientId\`, \`status\` of sites and visits, \`createdAt\`,
  \`updatedAt\`, \`svcPm\`, \`recordOwner\`, \`assetsToService\`, \`siteVisitAssets\`, \`returnLabel\`,
  \`fileAttachment\`) in a body are refused with 422 \`validation-error\` naming each. So is, at any depth and
  even where any member is allowed, a member that could change a prototype: \`__proto__\`, or \`constructor\`
  holding a member \`prototype\` (on the token endpoint, 400 \`invalid_request\` naming it). \`null\` for a required
  member is 422; optional string and boolean members accept \`null\`, meaning "no value" (on PATCH it
  clears the field).
- **String limits:** every string member of a request body must be non-empty and has a maximum length,
  stated on each field as \`maxLength\` (for example site \`name\` 200, \`siteCode\` 100, \`postalCode\` 20,
  message \`messageThread\` 20,000);
  a longer value is 422 naming the field. \`Idempotency-Key\` is 1 to 255 visible ASCII characters;
  \`If-Match\` at most 256 characters.
- **List limits:** every list in a request body has a maximum size, stated as \`maxItems\` (\`siteAssetIds\`
  200, \`eventTypes\` the 7 event types); a longer list is 422 naming that bound alone, its items unchecked.
- **Text** is Unicode: U+0000, and a lone surrogate (half of a UTF-16 pair, such as \`"\\ud800"\` in JSON),
  in any string of a body, path or query is 422 naming the field, as are percent-encoded query bytes that are
  not UTF-8 (\`%ED%A0%80\`, \`%FF\`); a path that is not UTF-8 is 400 \`malformed-request\`, and so is a JSON body
  with bytes that are not UTF-8 (RFC 8259 §8.1: JSON is UTF-8), refused before it is read as text.
- **Date-times** (\`startDate\`, \`dueDate\`, the operator's \`createdFrom\`, ...) are ISO 8601 (RFC 3339) with
  a time zone, from \`1900-01-01T00:00:00Z\` through \`9999-12-31T23:59:59Z\`, compared in UTC:
  \`0001-01-01T00:00:00+14:00\` is year 0 in UTC and is 422, like a leap second (\`:60\`).
- **Integer query parameters** (\`page[size]\`, ...) are plain digits: \`0x10\`, \`1e1\` and \`+5\` are 422.
- Exact-match filters and uniqueness (\`siteCode\`, \`clientTicketNumber\`) are case-sensitive.
- Unknown query parameters are 422. PATCH changes only the members supplied; a PATCH that changes nothing
  answers 200 with the current representation and version.
- Unparseable JSON, and a JSON body that is not UTF-8, is 400 \`malformed-request\`; a body of another media
  type is 415.
- A header that may be sent once (\`Host\`, \`Authorization\`, \`Content-Type\`, \`Idempotency-Key\`) sent on two
  lines, and a \`Transfer-Encoding\` other than \`chunked\` alone (\`gzip, chunked\`), are 400 \`malformed-request\`
  naming the header, and the connection is closed: the request could be read two ways.
- A JSON body is read only as far as its operation can use it: each operation's 413 names its limit, which is
  twice the longest body its schema admits (every character escaped), at least 16 KiB. An object of more than
  1,000 members, nesting deeper than 64 levels or more than 20,000 values in all is 422 on \`body\` without being
  parsed.
- A request sent with \`Expect: 100-continue\` (curl's, for every upload over 1 MiB) is checked before its body is
  asked for: rate limit, headers, token and scope, and a Content-Length over the operation's limit. A refusal
  (401, 403, 413, 429...) is the final answer without \`100 Continue\`, and the connection is closed: do not send
  the body. Otherwise \`100 Continue\` comes once, when the body is about to be read, then the answer.

## Field rules

- **Site status** is \`Active\` on creation.
- **Visit status** moves \`New\` → \`Scheduled\` → \`Dispatched\` → \`Completed\`, only through the operator's
  workflow (each step adds 1 to the visit's version and is announced by an event). Clients cannot write it.
- A \`projectId\` that is unknown, another client's or not Active is 409 \`invalid-project\`; an unknown
  \`itemName\` is 404. A \`siteAssetId\` that is unknown, of another site or another client is 409
  \`invalid-site-asset\` naming the ids (the first ten, and how many more). \`assetsToService\` is \`""\` when
  no asset is assigned.
- **Message urgency** accepts the four full values and also the short forms \`Low\`, \`Normal\`, \`High\` and
  \`Critical\`; it is stored and returned as the full value (e.g. \`High – Needs attention soon\`).
  Anything else (\`low\`, a hyphen instead of the en dash, extra spaces) is 422 listing the accepted values.
  Message \`status\` defaults to \`Open\`; \`siteVisitId\` is fixed at creation (a PATCH naming it is 422).
- **recordOwner** is a string naming who owns the record on the operator's side: \`Client API\` for messages
  created through this API. It is read-only.
- **Uploads:** at most 10 MiB (10,485,760 bytes) of file content; the file's bytes decide its type (return
  labels PDF; attachments PDF, PNG or JPEG). No \`file\` field, an empty file, two files or a broken multipart
  body is 422. \`returnLabel\` and \`fileAttachment\` are \`null\` before the first upload.

## Pagination

Cursor-paginated lists return records oldest first. \`page[size]\` is 1 to 100 in plain digits (default 25) and
\`meta.pageSize\` echoes the size applied. When more records exist, \`meta.nextCursor\` is present (absent
otherwise, never null): pass it unchanged as \`page[after]\`, with the filters its page was asked with. A cursor
of another list, of the same list under other filters, or of another client is 422. Reference lists (projects, items) are capped: only \`page[size]\` applies and \`page[after]\` is 422.

## Idempotent creates

\`POST\` of sites, site visits and messages accept an \`Idempotency-Key\`. Within 24 hours of completion the
same key and the same body replay the original response as first sent (201, body and \`ETag\`) with
\`Idempotent-Replayed: true\`; a replay of a resource no longer accessible is 404. The same key with a
different body is 409 \`idempotency-conflict\`; while the first request is in progress, 409
\`idempotency-pending\` with \`Retry-After\` (retry with the same key and body). Keys are scoped to your client
and the resource type. For imports, derive one key per record (e.g. from the row number), throttle well
below the rate limit (20 to 60 creates per minute) and retry 429 and 5xx with backoff under the same key and
body. Uploads and webhook subscription writes have no idempotency: reconcile (read, list) before repeating.

## Optimistic concurrency

PATCH of sites, site visits and messages accept \`If-Match\` with the quoted \`ETag\` of your last read
(a list of tags and \`*\` are understood). If the resource changed since, the answer is 409
\`version-conflict\` and nothing changes: read it again, reapply, retry. Of concurrent writers holding the
same ETag exactly one succeeds.

## Rate limit

${config.rateLimitPerMinute} requests per minute per client IP address, counted in each API process (not
shared per OAuth client: clients behind one egress address share a budget, and an IPv6 address counts with
the other addresses of its /64, which one host holds), in a sliding window: request
${config.rateLimitPerMinute + 1} inside any one minute is refused. Every request under \`/api/v1\` counts,
however its path is spelled, unknown paths, the token endpoint and this document included. Every answer
says where you stand: \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (seconds
until the oldest counted request leaves the window and \`X-RateLimit-Remaining\` grows). When remaining is
0, wait that long before the next request. The excess is answered 429 \`rate-limit-exceeded\` with
\`Retry-After\` (seconds): wait for it, reduce concurrency and back off with jitter.

Each API process also lets one client's requests work in the database at most ${config.databaseConnectionsPerTenant}
at a time. A request past that waits for one of them to finish, up to 5 s, and is then answered 503
\`service-unavailable\` with \`Retry-After\`, having changed nothing (retry a create with its Idempotency-Key).
What fills them is requests that wait for one another, such as changes of one resource, or creates on a site
whose siteCode is being changed: send those one after the other.

## Errors

Errors are problem details (RFC 9457, \`application/problem+json\`) with \`type\`, \`title\`, \`status\` and
\`detail\`; a 422 also has \`errors\`, mapping each failing field (or query parameter or header, as sent) to
its messages: at most 50 of them, with \`errorsOmitted\` counting any others. A 409 \`duplicate-resource\` (a
\`siteCode\` or \`clientTicketNumber\` your client has already) names the resource that has it in \`existing\`,
\`{"type": "sites", "id": "site_…"}\` as its \`data\` shows them: read it rather than search for it (absent only
when it could not be read at that moment). The token endpoint answers
errors as \`application/json\` with the problem members plus OAuth's \`error\` and \`error_description\`.
Two problems come from the HTTP server before the request reaches any operation, so every operation (the token
endpoint's included) can answer them, without \`X-RateLimit-*\` headers, and the connection is closed: 408
\`request-timeout\` when the request has not arrived completely within
${requestTimeoutText(config.requestTimeoutMs)} (a slow upload), 431 \`headers-too-large\` for request headers over
16 KiB.
Each \`type\` is an address that explains the problem and what to do:

${problemTypeTable(config)}

A timeout or a 5xx does not prove that a write failed: retry creates with the same Idempotency-Key; read
before repeating other writes. 503 responses carry \`Retry-After\` when the wait is known.

## Webhooks

Subscriptions (\`/api/v1/webhook-subscriptions\`) receive signed POSTs for the site-visit events listed under
webhooks (${EVENT_TYPES.join(', ')}). Delivery is at least once and unordered: deduplicate on the body \`id\` in durable
storage and answer 2xx only once the event is stored. Verify the v1 signature before parsing the body (see
the delivery headers of each event), and answer 401 to a delivery that fails.

A delivery is verified when \`x-svc-signature-version\` is \`v1\`, \`x-svc-signature-alg\` is \`hmac-sha256\`,
\`x-svc-timestamp\` (decimal Unix seconds) is within 300 seconds of your clock either way, and \`x-svc-signature\`
(64 lower-case hex digits) equals, compared in constant time, the HMAC-SHA256 keyed with your secret's UTF-8 bytes
(as given: no trimming or decoding) of the timestamp, a period and the raw body bytes (never a re-serialised
object). A header sent twice is refused. A legacy subscription's deliveries carry no version or timestamp and are
signed with a key you do not have: refuse them too (never fall back), and move the subscription to v1.

Each delivery carries one signature, made with the subscription's secret at the time of the attempt: from the
PATCH that changes the secret, every attempt, retries of earlier events included, is signed with the new one. To
rotate without refusing deliveries, give your receiver the new secret beside the old (the Python and Java
functions below take a list and accept a delivery signed with any of them), PATCH the subscription, then drop the
old secret a minute later (an attempt signed just before the PATCH may still be arriving).

The functions below do exactly that and are tested against this service's deliveries; in Node.js, the client
package's \`verifyWebhook\` does the same.

${verificationSnippetBlocks()}
## Versioning

The API version is v1 (the path prefix); this document is version ${API_VERSION}. Webhook bodies carry
\`payloadVersion\`; subscriptions carry \`signingVersion\` (legacy or v1; only the upgrade to v1 exists).
`.trim();
}

function operatorDescription(): string {
  return `
The operator's API: provisioning of tenants (clients), their credential pairs and scopes, reference data
(projects, items), site assets and the operator's other functions. Internal: not for clients.

Every request needs \`Authorization: Bearer <ADMIN_TOKEN>\`; a missing or wrong token is 401. In production
the operator API exists only when \`ADMIN_TOKEN\` is set (otherwise every path answers 404). It is not counted
by the client rate limit. Every response wraps its payload in \`{data: …}\`; errors are problem details.

An unknown query parameter of a GET is 422 \`validation-error\` naming it (on those that take none too).
Answers that carry a secret (a new tenant with its first credential pair, a further pair) are sent with
\`Cache-Control: no-store\`: keep the secret, then let the answer go.
`.trim();
}

const CLIENT_TAGS = [
  {
    name: 'Authentication',
    description: 'OAuth 2.0 client credentials: exchange your client id and secret for a bearer token.',
  },
  { name: 'Sites', description: 'The places where work happens, identified by your own siteCode.' },
  { name: 'Site visits', description: 'Work orders at a site, with assigned site assets and a return label.' },
  { name: 'Reference lists', description: 'Projects and items available to fill in site-visit fields.' },
  { name: 'Messages', description: 'Notes tied to a site visit, with an optional file attachment.' },
  { name: 'Webhook subscriptions', description: 'Where and for which events signed notifications are sent.' },
  { name: WEBHOOK_TAG, description: 'The notifications the service POSTs to your subscription targetUrl.' },
  { name: 'Documentation', description: 'This document.' },
];

const SANDBOX_TAG_DEFINITION = {
  name: SANDBOX_TAG,
  description:
    "Sandbox only: drive your own site visits through the operator's workflow, to test your webhook receiver without the operator.",
};

const OPERATOR_TAGS = [
  { name: 'Tenants', description: 'Clients, their scopes, flags and credential pairs.' },
  { name: 'Reference data', description: 'Projects and items of a tenant.' },
  { name: 'Site assets', description: "Assets installed at a tenant's sites." },
  {
    name: 'Site visits',
    description:
      'Visits created outside the client API, and the workflow that moves a visit New → Scheduled → Dispatched → Completed and publishes its lifecycle events.',
  },
  {
    name: 'Messages',
    description:
      'The notes a client adds to its visits, and their file attachments (read-only: the client writes them).',
  },
  {
    name: 'Webhooks',
    description: 'Legacy subscriptions, subscription health, and deliveries with their attempt logs and retries.',
  },
];

/** The Problem schema lists every problem type, with the address of its explanation; both problem shapes get an example. */
function problemAnnotations(config: Config) {
  const types = problemTypesOf(config.environment).map(([slug, problem]) => ({
    slug,
    status: problem.status,
    title: problem.title,
    type: `${config.problemBaseUrl}/${slug}`,
  }));
  const list = types.map((type) => `- \`${type.slug}\` (${type.status}): ${type.title}`).join('\n');
  return {
    Problem: {
      description: `Problem details (RFC 9457). \`type\` is \`${config.problemBaseUrl}/<slug>\`; each address explains the problem and what to do. Slugs:\n\n${list}`,
      'x-problem-types': types,
      examples: [problemExample(config.problemBaseUrl)],
    },
    ValidationProblem: { examples: [validationProblemExample(config.problemBaseUrl)] },
  };
}

/** info.contact (API_CONTACT_NAME, API_CONTACT_URL, API_CONTACT_EMAIL). No licence: see redocly.yaml. */
function contactOf(config: Config) {
  const { name, url, email } = config.apiContact;
  return { name, url, ...(email === undefined ? {} : { email }) };
}

export function openApiDefinitions(config: Config): OpenApiDefinitions {
  const schemaAnnotations = problemAnnotations(config);
  return {
    client: {
      prefix: '/api/v1/',
      rateLimited: true,
      requestTimeoutMs: config.requestTimeoutMs,
      info: {
        title: 'Site Services API',
        version: API_VERSION,
        description: clientDescription(config),
        contact: contactOf(config),
      },
      tags: config.environment === 'sandbox' ? [...CLIENT_TAGS, SANDBOX_TAG_DEFINITION] : CLIENT_TAGS,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'oauth2',
          description: `OAuth 2.0 client credentials. The token URL is this environment's; on the other environment use its own ${'`'}/api/v1/oauth/token${'`'} with that environment's credentials.`,
          flows: {
            clientCredentials: {
              tokenUrl: `${ownBaseUrl(config)}/api/v1/oauth/token`,
              scopes: Object.fromEntries(ALL_SCOPES.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope]])),
            },
          },
        },
      },
      // The sandbox's own resources (webhook listeners) leave no trace in production's document.
      components:
        config.environment === 'sandbox' ? { ...CLIENT_COMPONENTS, ...SANDBOX_COMPONENTS } : CLIENT_COMPONENTS,
      webhooks: eventWebhooks(),
      schemaAnnotations,
    },
    operator: {
      prefix: OPERATOR_PATHS,
      rateLimited: false,
      requestTimeoutMs: config.requestTimeoutMs,
      info: {
        title: 'Site Services operator API',
        version: API_VERSION,
        description: operatorDescription(),
        contact: contactOf(config),
      },
      tags: OPERATOR_TAGS,
      securitySchemes: {
        [ADMIN_SECURITY_SCHEME]: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN).' },
      },
      security: [{ [ADMIN_SECURITY_SCHEME]: [] }],
      components: OPERATOR_COMPONENTS,
      schemaAnnotations,
    },
  };
}
