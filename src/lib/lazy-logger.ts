/**
 * A child logger made only when it writes a line: each request's (Fastify's `childLoggerFactory`), and each
 * webhook attempt's (outbox/attempt.ts).
 *
 * Fastify gives every request a child logger bound to its request id, and authentication binds the tenant
 * and client: with the redaction paths of `createLogger`, each binding goes through the redacting
 * serialiser, about 2 µs of a 45 µs read (bench/results/history.md, round 3). Most requests log nothing at
 * the production level (warn), so the child is made on the first line at an enabled level, with every
 * binding given so far; the lines it writes are those the eager child would have written.
 *
 * The lazy logger's methods live on a prototype made once per parent (itself inheriting the parent's), so a
 * request's logger is one small object of three fields: with its own closures assigned one by one (as it
 * first was), each request's logger took ten closures and fell into V8's dictionary mode (a profile of GETs
 * showed the rehashing and the megamorphic stores; bench/results/history.md, session 22).
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

const BINDINGS = Symbol('bindings');
const LATER = Symbol('later');
const REAL = Symbol('real');

/** A request's logger: the parent's, through `lazyPrototype`, and what it was bound to so far. */
interface LazyLogger extends Logger {
  [BINDINGS]: Bindings;
  /** Bindings given by `setBindings` before the child was made. */
  [LATER]: Bindings | undefined;
  /** The child, once a line was written. */
  [REAL]: Logger | undefined;
}

/** The child logger with every binding given so far, made on first use. */
function materialise(logger: LazyLogger, parent: Logger): Logger {
  const later = logger[LATER];
  logger[REAL] ??= parent.child(later ? { ...logger[BINDINGS], ...later } : logger[BINDINGS]);
  return logger[REAL];
}

function lazyPrototype(parent: Logger): object {
  const prototype = Object.create(parent) as Record<string, unknown>;
  for (const level of LEVELS) {
    prototype[level] = function (this: LazyLogger, ...args: unknown[]) {
      const real = this[REAL];
      if (real) return (real[level] as (...a: unknown[]) => void)(...args);
      if (!parent.isLevelEnabled(level)) return;
      (materialise(this, parent)[level] as (...a: unknown[]) => void)(...args);
    };
  }
  prototype.child = function (this: LazyLogger, more: Bindings, options?: ChildLoggerOptions) {
    return materialise(this, parent).child(more, options);
  };
  prototype.setBindings = function (this: LazyLogger, more: Bindings) {
    const real = this[REAL];
    const later = this[LATER];
    // Kept as given when it is the first (never written to: merged into a new object when more come).
    if (real) real.setBindings(more);
    else this[LATER] = later === undefined ? more : { ...later, ...more };
  };
  prototype.bindings = function (this: LazyLogger) {
    const real = this[REAL];
    return real ? real.bindings() : { ...parent.bindings(), ...this[BINDINGS], ...this[LATER] };
  };
  return prototype;
}

/** The prototype of each parent's lazy loggers (a parent is the app's logger or a worker's: a handful). */
const prototypes = new WeakMap<Logger, object>();

export function lazyChildLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions = {}): Logger {
  // A route with a level or serialisers of its own gets its child at once, as Fastify would make it.
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  let prototype = prototypes.get(parent);
  if (prototype === undefined) {
    prototype = lazyPrototype(parent);
    prototypes.set(parent, prototype);
  }
  const logger = Object.create(prototype) as LazyLogger;
  logger[BINDINGS] = bindings;
  logger[LATER] = undefined;
  logger[REAL] = undefined;
  return logger;
}
