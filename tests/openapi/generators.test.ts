/**
 * What other generators make of the client document, beside openapi-typescript (the client package's):
 * @hey-api/openapi-ts and orval generate a client from it, the generated code type-checks (strict, DOM
 * lib), and a Site is one named type in each, the type every site operation answers with, rather than one
 * anonymous copy per operation. The document is the one the default configuration serves.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { generate } from 'orval';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.js';
import { buildOpenApiDocuments } from '../../src/openapi-documents.js';

let directory: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'openapi-generators-'));
  const { client } = await buildOpenApiDocuments(configWith({}, {}));
  const input = path.join(directory, 'openapi.json');
  writeFileSync(input, JSON.stringify(client));
  await createClient({ input, output: path.join(directory, 'hey-api'), logs: { level: 'silent' } } as never);
  await generate({
    input: { target: input },
    output: {
      target: path.join(directory, 'orval', 'api.ts'),
      schemas: path.join(directory, 'orval', 'model'),
      client: 'fetch',
      mode: 'split',
    },
  } as never);
}, 120_000);
afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** Type-level proof that every site operation of both generated clients answers with the one Site type. */
const SITE_CHECK = `
import type * as hey from './hey-api/types.gen';
import type * as orvalApi from './orval/api';
import type * as orval from './orval/model';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const yes = <T extends true>(): T => true as T;

yes<Equal<hey.GetSiteResponse['data'], hey.Site>>();
yes<Equal<hey.CreateSiteResponse['data'], hey.Site>>();
yes<Equal<hey.UpdateSiteResponse['data'], hey.Site>>();
yes<Equal<hey.ListSitesResponse['data'][number], hey.Site>>();
yes<Equal<hey.CreateSiteData['body'], hey.SiteCreate>>();

yes<Equal<orvalApi.getSiteResponse200['data']['data'], orval.Site>>();
yes<Equal<orvalApi.createSiteResponse201['data']['data'], orval.Site>>();
yes<Equal<orvalApi.updateSiteResponse200['data']['data'], orval.Site>>();
yes<Equal<orvalApi.listSitesResponse200['data']['data'][number], orval.Site>>();
`;

function typeCheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (diagnostic) =>
        `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
    );
}

/** The names of the types a generated file declares. */
function declaredTypes(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^export (?:type|interface) (\w+)/gm)].map((match) => match[1]!);
}

describe('clients generated from the client document', () => {
  it('type-check, and answer every site operation with the one Site type', { timeout: 120_000 }, () => {
    const check = path.join(directory, 'site-check.ts');
    writeFileSync(check, SITE_CHECK);
    const orvalModels = readdirSync(path.join(directory, 'orval', 'model')).map((file) =>
      path.join(directory, 'orval', 'model', file),
    );
    expect(
      typeCheck([
        path.join(directory, 'hey-api', 'index.ts'),
        path.join(directory, 'orval', 'api.ts'),
        ...orvalModels,
        check,
      ]),
    ).toEqual([]);
  });

  it('name Site once in each, with no per-operation copy of it', () => {
    const hey = declaredTypes(path.join(directory, 'hey-api', 'types.gen.ts'));
    expect(hey.filter((name) => name === 'Site')).toHaveLength(1);
    const models = readdirSync(path.join(directory, 'orval', 'model')).flatMap((file) =>
      declaredTypes(path.join(directory, 'orval', 'model', file)),
    );
    expect(models.filter((name) => name === 'Site')).toHaveLength(1);
    // orval names an inline response body after its operation (getSite200Data, listSites200DataItem, …):
    // with every resource named, no model is named after an operation's response.
    expect(models.filter((name) => /\d{3}/.test(name))).toEqual([]);
    for (const resource of ['Site', 'SiteVisit', 'Message', 'WebhookSubscription', 'Project', 'Item', 'FileObject']) {
      expect(hey, resource).toContain(resource);
      expect(models, resource).toContain(resource);
    }
  });
});
