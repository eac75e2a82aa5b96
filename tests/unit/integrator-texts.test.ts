/**
 * What an integrator reads cites nothing they cannot open (tests/helpers/internal-citations.ts): the client
 * package's sources (they become the published JavaScript and .d.ts, hover docs, `svc --help` and its error
 * messages; the generated types carry the OpenAPI descriptions), its README and manifest, both OpenAPI
 * documents of either environment, and the problem types the /problems/ pages explain. Comments of the
 * service's own sources, which no integrator reads, may cite the specification.
 * `.ci/client-package.sh` checks the packed tarball itself the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configWith } from '../../src/config.js';
import { PROBLEM_TYPES } from '../../src/http/problem-types.js';
import { buildOpenApiDocuments } from '../../src/openapi-documents.js';
import { internalCitations, internalCitationsIn } from '../helpers/internal-citations.js';

const CLIENT_PACKAGE = new URL('../../packages/client/', import.meta.url);

/** The files the package is built and published from: its TypeScript sources, README and package.json. */
function publishedSources(): string[] {
  const sources = readdirSync(new URL('src/', CLIENT_PACKAGE), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `src/${file}`);
  return [...sources.sort(), 'README.md', 'package.json'];
}

describe('integrator-facing texts cite no internal document', () => {
  it.for(publishedSources())('packages/client/%s', (file) => {
    expect(internalCitations(readFileSync(new URL(file, CLIENT_PACKAGE), 'utf8'))).toEqual([]);
  });

  it.for(['sandbox', 'production'] as const)('the %s OpenAPI documents', async (environment) => {
    const { client, operator } = await buildOpenApiDocuments(configWith({ environment }, {}));
    expect(internalCitationsIn(client)).toEqual([]);
    expect(internalCitationsIn(operator)).toEqual([]);
  });

  it('the problem types: titles and what to do', () => {
    expect(internalCitationsIn(PROBLEM_TYPES)).toEqual([]);
  });

  it('recognises the citations it guards against', () => {
    for (const citation of [
      'Not retried (SPEC Retry rules 4).',
      'decided by the bytes (DECISIONS Uploads)',
      'see docs/decisions.md',
      'Decisions on points the specification leaves open',
      'listeners (issue 18)',
      'retried like a read (rule 7)',
    ])
      expect(internalCitations(citation), citation).toHaveLength(1);
  });
});
