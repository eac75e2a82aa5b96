/** A logger whose lines a test reads: each written line is kept, parsed, and can be waited for. */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export type LogLine = Record<string, any>;

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, in order. */
  lines: LogLine[];
  /** Resolves with the first line (already written or to come) that `match` accepts. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
}

/** pino's numeric levels, as the lines carry them. */
export const LOG_LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export function capturedLog(level: pino.Level = 'debug'): CapturedLog {
  const lines: LogLine[] = [];
  const listeners = new Set<() => void>();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      for (const listener of listeners) listener();
      done();
    },
  });
  return {
    logger: pino({ level }, sink),
    lines,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no such log line within ${timeoutMs} ms; got ${JSON.stringify(lines)}`));
        }, timeoutMs);
        function check() {
          const line = lines.find(match);
          if (!line) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(line);
        }
        listeners.add(check);
        check();
      });
    },
  };
}
