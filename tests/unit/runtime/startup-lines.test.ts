/**
 * Where a start says the service answers: one line (a single process's, or a cluster primary's), naming an
 * address a developer can open and, for a wildcard HOST, that every other interface answers too (Fastify's own
 * line per address and per cluster child is not logged: the logger drops it).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, UNLOGGED } from '../../../src/lib/logger.js';
import { listeningLine } from '../../../src/runtime/startup-progress.js';

describe('the listening line', () => {
  it('names the address, and every interface for a wildcard HOST', () => {
    expect(listeningLine('127.0.0.1', 3000)).toMatch(
      /^listening on http:\/\/127\.0\.0\.1:3000 \(ready [\d.]+ s after start\)$/,
    );
    expect(listeningLine('0.0.0.0', 3000)).toMatch(
      /^listening on http:\/\/127\.0\.0\.1:3000 and every other interface \(HOST=0\.0\.0\.0; ready [\d.]+ s after start\)$/,
    );
    expect(listeningLine('::', 3000)).toContain('and every other interface (HOST=::;');
    expect(listeningLine('::1', 3000)).toMatch(/^listening on http:\/\/\[::1\]:3000 \(ready/);
  });
});

describe("the service's logger", () => {
  it('drops the text Fastify is given for its listening line, and nothing else, in its children too', () => {
    const lines: string[] = [];
    const memory = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ logLevel: 'info' }, memory);
    logger.info(UNLOGGED);
    logger.child({ component: 'http' }).info(UNLOGGED);
    logger.info('Server listening at http://127.0.0.1:3000');
    logger.info({ startup: true }, UNLOGGED);
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['Server listening at http://127.0.0.1:3000', UNLOGGED]);
  });
});
