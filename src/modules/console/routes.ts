/**
 * The operator console: a single page at /console (Preact + htm as ES modules, no build step), its
 * scripts and styles from ./console, and the three vendor modules from node_modules. Everything it does
 * goes through the operator API with the token the operator typed in, held in the page's memory only.
 *
 * Registered only when the operator API exists (ADMIN_TOKEN, or the sandbox's generated token). Not
 * counted by the client rate limit (it is not under /api/v1). The page is static: the token is never
 * in it, so it needs no authentication itself.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { Problem } from '../../http/problem.js';
import { nameOrWhy } from '../../http/request-names.js';
import type { Api } from '../../http/types.js';
import { PACKAGE_ROOT } from '../../lib/package-root.js';

/** The console's own files: ./console at the repository root. */
const CONSOLE_DIR = path.join(PACKAGE_ROOT, 'console');

const resolve = createRequire(import.meta.url).resolve;

/**
 * The vendor modules by the name the console imports them under. hooks.mjs imports the bare specifier
 * "preact", which a browser cannot resolve without an import map (an inline script, refused by the
 * CSP): it is served with that import pointed at ./preact.mjs.
 */
const VENDOR: Record<string, { file: () => string; rewrite?: (source: string) => string }> = {
  'preact.mjs': { file: () => path.join(path.dirname(resolve('preact/package.json')), 'dist/preact.mjs') },
  'hooks.mjs': {
    file: () => path.join(path.dirname(resolve('preact/package.json')), 'hooks/dist/hooks.mjs'),
    rewrite: (source) => source.replace(/from\s*["']preact["']/g, 'from"./preact.mjs"'),
  },
  // htm exports no package.json; its CommonJS entry sits next to the ES module.
  'htm.mjs': { file: () => path.join(path.dirname(resolve('htm')), 'htm.mjs') },
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Scripts and styles from this origin only; no inline script or style; the API on this origin only. Trusted
 * Types with no policy: every HTML sink (innerHTML, Preact's dangerouslySetInnerHTML, insertAdjacentHTML)
 * throws, so no later change can render a tenant's text as markup, even by mistake.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

const ASSET = /^[a-z][a-z0-9-]*\.(js|css)$/;

/** The 404 for a console file the path names (repeated by the rule of request-names.ts). */
function noFile(file: string, what = 'file'): Problem {
  return new Problem('not-found', `The console has no ${what} ${nameOrWhy(file, 'with a name', true)}.`);
}

export function registerConsoleRoutes(app: Api): void {
  const cache = new Map<string, Buffer | string>();
  const load = async (key: string, read: () => Promise<Buffer | string>) => {
    let content = cache.get(key);
    if (content === undefined) {
      content = await read();
      cache.set(key, content);
    }
    return content;
  };
  const page = async (_request: unknown, reply: FastifyReply) =>
    secure(reply)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(await load('index.html', () => readFile(path.join(CONSOLE_DIR, 'index.html'))));

  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/', { schema: { hide: true } }, page);

  app.get(
    '/console/:file',
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const { file } = request.params;
      if (!ASSET.test(file)) throw noFile(file);
      const content = await load(file, () => readFile(path.join(CONSOLE_DIR, file))).catch(() => {
        throw noFile(file);
      });
      return secure(reply).type(TYPES[path.extname(file)]!).header('cache-control', 'no-cache').send(content);
    },
  );

  app.get(
    '/console/vendor/:file',
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const vendor = Object.hasOwn(VENDOR, request.params.file) ? VENDOR[request.params.file]! : undefined;
      if (!vendor) throw noFile(request.params.file, 'vendor module');
      const content = await load(`vendor/${request.params.file}`, async () => {
        const source = await readFile(vendor.file(), 'utf8');
        return vendor.rewrite ? vendor.rewrite(source) : source;
      });
      return secure(reply).type(TYPES['.mjs']!).header('cache-control', 'public, max-age=86400').send(content);
    },
  );
}
