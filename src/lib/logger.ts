import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * A message this logger drops. Fastify's listen logs "Server listening at <address>" itself, for every address
 * of a wildcard HOST and in every process, each child of a cluster included (WEB_CONCURRENCY=2 on 0.0.0.0: four
 * lines beside the primary's); server.ts has it log this instead (`listenTextResolver`), since the start says
 * once where the service answers, in its own progress line.
 */
export const UNLOGGED = '\u0000unlogged';

/**
 * Structured JSON logs. Request logs carry method, url and the request id, never headers; the redact
 * list is a second line of defence should a header or body ever be logged by mistake.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    hooks: {
      logMethod(args, method) {
        if (args[0] !== UNLOGGED) method.apply(this, args);
      },
    },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        '*.client_secret',
        '*.secret',
        '*.access_token',
        'client_secret',
        'secret',
        'access_token',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
