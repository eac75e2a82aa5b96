/**
 * Human documentation served by the service itself, outside /api/v1 (no token, not rate-limited):
 * - GET /docs: the API reference, rendered by Redoc from GET /api/v1/openapi.json; Redoc's standalone
 *   bundle is served from the installed package, so the page needs no outside network (its CSP forbids it);
 * - GET /problems/ and GET /problems/{slug}: what each problem type means and what to do about it. The
 *   problem `type` addresses point here unless PROBLEM_BASE_URL points elsewhere; the pages are served
 *   here either way.
 */
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import { Problem } from '../../http/problem.js';
import { nameOrWhy } from '../../http/request-names.js';
import { PROBLEM_TYPES, type ProblemSlug, problemTypesOf } from '../../http/problem-types.js';
import type { Api } from '../../http/types.js';
import { API_VERSION } from './definitions.js';

const REDOC_BUNDLE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

/**
 * Redoc's sidebar footer shows Redocly's logo from their CDN, which the page's CSP blocks: a broken image
 * and a console error. The bundle is served with a small mark of its own in its place (a data: address,
 * which the CSP allows), so the page asks for nothing outside the service. tests/docs/reference-page.test.ts
 * fails if a Redoc upgrade brings another outside address.
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOCAL_LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="2" y="1" width="12" height="14" rx="2" fill="#8a94a6"/><path d="M5 5h6M5 8h6M5 11h4" stroke="#fff" stroke-width="1.5"/></svg>',
)}`;

async function servedRedocBundle(): Promise<Buffer> {
  const source = await readFile(REDOC_BUNDLE, 'utf8');
  return Buffer.from(source.replaceAll(REDOC_CDN_LOGO, LOCAL_LOGO));
}

/** Redoc styles with inline styles and runs its search in a worker made from a blob. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** What a status means to the client, for the problem pages. */
const STATUS_MEANINGS: Record<number, string> = {
  400: 'The request could not be read, so nothing was done.',
  401: 'The request was not authenticated, so nothing was done.',
  403: 'The request was authenticated but is not allowed, so nothing was done.',
  404: 'The resource addressed or referred to does not exist for your client.',
  405: 'The path exists, but not with this HTTP method.',
  409: 'The request conflicts with the current state of a resource, so nothing was changed.',
  413: 'The upload is larger than the service accepts, so it was not stored.',
  415: 'The body or file is of a media type this endpoint does not accept, so nothing was stored.',
  422: 'The request was read but its data is invalid, so nothing was done.',
  429: 'Too many requests came from your address; this one was not processed.',
  500: 'The service failed while handling the request; the outcome of a write is unknown.',
  503: 'The service could not handle the request right now; the outcome of a write is unknown.',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const PAGE_STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 3rem auto; padding: 0 1rem; color: #1d2430; }
h1 { font-size: 1.6rem; margin-bottom: .25rem; } code { background: #f1f3f6; padding: .1rem .3rem; border-radius: 3px; }
.status { color: #5b6576; margin-top: 0; } table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e3e6eb; } a { color: #2251c4; }`;

function sendHtml(reply: FastifyReply, page: { title: string; csp: string; style: string; body: string }) {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', page.csp)
    .header('x-content-type-options', 'nosniff')
    .send(
      `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<link rel="icon" href="data:,">
<style>${page.style}</style>
</head>
<body>
${page.body}
</body>
</html>
`,
    );
}

function htmlPage(reply: FastifyReply, title: string, body: string) {
  return sendHtml(reply, { title, csp: PAGE_CSP, style: PAGE_STYLE, body });
}

function problemPage(reply: FastifyReply, config: Config, slug: ProblemSlug) {
  const problem = PROBLEM_TYPES[slug];
  const reason = STATUS_CODES[problem.status] ?? '';
  return htmlPage(
    reply,
    `${problem.title} (${slug})`,
    `<h1>${escapeHtml(problem.title)}</h1>
<p class="status">HTTP ${problem.status} ${escapeHtml(reason)} · type <code>${escapeHtml(`${config.problemBaseUrl}/${slug}`)}</code></p>
<h2>What it means</h2>
<p>${escapeHtml(STATUS_MEANINGS[problem.status] ?? reason)}</p>
<h2>What to do</h2>
<p>${escapeHtml(problem.help)}</p>
<p>The response's <code>detail</code> says what happened in this case${problem.status === 422 ? '; <code>errors</code> names each failing field' : ''}.</p>
<p><a href="./">All problem types</a> · <a href="/docs">API reference</a></p>`,
  );
}

function problemIndex(reply: FastifyReply, config: Config) {
  const rows = problemTypesOf(config.environment)
    .map(
      ([slug, problem]) =>
        `<tr><td>${problem.status}</td><td><a href="/problems/${slug}"><code>${slug}</code></a></td><td>${escapeHtml(problem.title)}</td></tr>`,
    )
    .join('\n');
  return htmlPage(
    reply,
    'Problem types',
    `<h1>Problem types</h1>
<p>Every error of the API is a problem details object (RFC 9457) whose <code>type</code> ends in one of these slugs.</p>
<table><thead><tr><th>Status</th><th>Type</th><th>Title</th></tr></thead><tbody>
${rows}
</tbody></table>
<p><a href="/docs">API reference</a></p>`,
  );
}

export function registerDocsRoutes(app: Api, config: Config): void {
  let bundle: Buffer | undefined;

  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    sendHtml(reply, {
      title: `Site Services API ${API_VERSION} reference`,
      csp: DOCS_CSP,
      style: 'body { margin: 0; }',
      body: `<redoc spec-url="/api/v1/openapi.json" required-props-first="true" expand-responses="200,201"></redoc>
<script src="/docs/redoc.standalone.js"></script>`,
    }),
  );

  app.get('/docs/redoc.standalone.js', { schema: { hide: true } }, async (_request, reply) => {
    bundle ??= await servedRedocBundle();
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(bundle);
  });

  app.get('/problems', { schema: { hide: true } }, async (_request, reply) => problemIndex(reply, config));
  app.get('/problems/', { schema: { hide: true } }, async (_request, reply) => problemIndex(reply, config));
  app.get(
    '/problems/:slug',
    { schema: { hide: true, params: Type.Object({ slug: Type.String() }) } },
    async (request, reply) => {
      const { slug } = request.params;
      if (!problemTypesOf(config.environment).some(([known]) => known === slug))
        throw new Problem(
          'not-found',
          `There is no problem type ${nameOrWhy(slug, 'with a name', true)}. GET /problems/ lists them.`,
        );
      return problemPage(reply, config, slug as ProblemSlug);
    },
  );
}
