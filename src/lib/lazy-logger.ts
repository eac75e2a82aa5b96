/**
 * A child logger made only when it writes a line: each request's (Fastify's `childLoggerFactory`), and each
 * webhook attempt's (outbox/attempt.ts).
 *
 * Fastify gives every request a child logger bound to its request id, and authentication binds the tenant
 * and client: with the redaction paths of `createLogger`, each binding goes through the redacting
 * serialiser, about 2 µs of a 45 µs read (bench/results/history.md, round 3). Most requests log nothing at
 * the production level (warn), so the child is made on the first line at an enabled level, with every
 * binding given so far; the lines it writes are those the eager child would have written.
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export function lazyChildLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions = {}): Logger {
  // A route with a level or serialisers of its own gets its child at once, as Fastify would make it.
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  let real: Logger | undefined;
  let later: Bindings | undefined;
  const materialise = (): Logger => (real ??= parent.child(later ? { ...bindings, ...later } : bindings));
  const logger = Object.create(parent) as Logger;
  for (const level of LEVELS) {
    (logger as unknown as Record<string, unknown>)[level] = (...args: unknown[]) => {
      if (real) return (real[level] as (...a: unknown[]) => void)(...args);
      if (!parent.isLevelEnabled(level)) return;
      (materialise()[level] as (...a: unknown[]) => void)(...args);
    };
  }
  logger.child = ((more: Bindings, childOptions?: ChildLoggerOptions) =>
    materialise().child(more, childOptions)) as unknown as Logger['child'];
  logger.setBindings = (more: Bindings) => {
    if (real) real.setBindings(more);
    else later = { ...later, ...more };
  };
  logger.bindings = () => (real ? real.bindings() : { ...parent.bindings(), ...bindings, ...later });
  return logger;
}
