import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * Structured JSON logs. Request logs carry method, url and the request id, never headers; the redact
 * list is a second line of defence should a header or body ever be logged by mistake.
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
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
  });
}
