/** The lazy request logger writes what an eager child logger would, and makes no child for silent requests. */
import pino, { type Logger } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLogger } from '../../../src/lib/lazy-logger.js';

function capture(level: string): { parent: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const parent = pino(
    { level, redact: { paths: ['*.client_secret', 'client_secret'], censor: '[redacted]' } },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  return { parent, lines };
}

describe('lazyChildLogger', () => {
  it('makes no child while nothing is written at an enabled level', () => {
    const { parent, lines } = capture('warn');
    const child = vi.spyOn(parent, 'child');
    const logger = lazyChildLogger(parent, { requestId: 'r-1' }, {});
    logger.info('incoming request');
    logger.setBindings({ tenantId: 't-1' });
    logger.debug({ detail: 1 }, 'details');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('writes with every binding given before and after its first line, and redacts as the parent does', () => {
    const { parent, lines } = capture('info');
    const logger = lazyChildLogger(parent, { requestId: 'r-2' }, {});
    logger.setBindings({ tenantId: 't-2' });
    logger.info({ body: { client_secret: 's3cret' } }, 'first');
    logger.setBindings({ clientId: 'c-2' });
    logger.warn('second');
    expect(lines.map(({ msg, requestId, tenantId, clientId }) => ({ msg, requestId, tenantId, clientId }))).toEqual([
      { msg: 'first', requestId: 'r-2', tenantId: 't-2', clientId: undefined },
      { msg: 'second', requestId: 'r-2', tenantId: 't-2', clientId: 'c-2' },
    ]);
    expect(lines[0]!.body).toEqual({ client_secret: '[redacted]' });
    expect(logger.bindings()).toMatchObject({ requestId: 'r-2', tenantId: 't-2', clientId: 'c-2' });
  });

  it('children of it carry its bindings; a route with options of its own gets its child at once', () => {
    const { parent, lines } = capture('info');
    const logger = lazyChildLogger(parent, { requestId: 'r-3' }, {});
    logger.setBindings({ tenantId: 't-3' });
    logger.child({ deliveryId: 'd-3' }).info('nested');
    expect(lines[0]).toMatchObject({ requestId: 'r-3', tenantId: 't-3', deliveryId: 'd-3', msg: 'nested' });
    const child = vi.spyOn(parent, 'child');
    lazyChildLogger(parent, { requestId: 'r-4' }, { level: 'error' });
    expect(child).toHaveBeenCalledWith({ requestId: 'r-4' }, { level: 'error' });
  });
});
