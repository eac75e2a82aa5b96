/**
 * The house rule "time is injectable" (docs/architecture.md), executed: the service reads the time of day
 * only through a `Clock` it was given, so that a test can set it (expiry, retry schedules, timestamps,
 * the sandbox simulator) and no decision reads the real clock behind its back. In `src/`, `Date.now()` and
 * `new Date()` without an argument appear only in `lib/clock.ts` (the system clock) and in the places
 * listed below, each with its reason; and the system clock is chosen only by the composition root, which
 * hands it to everything else. A new reading fails here until it takes a clock or joins the list; an entry
 * whose reading is gone fails too. Durations (`performance.now()`) are not the time of day and not checked.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** `file (from src) → why it reads the real time itself`. */
const REAL_TIME: Record<string, string> = {
  'lib/clock.ts': 'the system clock itself',
  'modules/outbox/wake-timer.ts':
    "a real timer's due moment, compared with real time; the delay it is set for comes from the injected clock",
  'modules/outbox/transport.ts': "the connection pools' idle sweep, on real time like the sockets it closes",
  'db/embedded-template-cli.ts': "a build step's own duration, printed when it ends",
};

/** Only these choose the system clock (`systemClock`); everything else is handed a clock. */
const COMPOSITION_ROOT = new Set(['server.ts', 'app.ts', 'lib/clock.ts']);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const file = path.join(directory, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

interface Reading {
  file: string;
  line: number;
  text: string;
}

/** Every `Date.now()`, argument-less `new Date()` and mention of `systemClock` in a file. */
function readingsOf(file: string): { realTime: Reading[]; systemClock: Reading[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const relative = path.relative(SRC, file);
  const realTime: Reading[] = [];
  const systemClock: Reading[] = [];
  const at = (node: ts.Node): Reading => ({
    file: relative,
    line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
    text: node.getText(),
  });
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.expression.getText() === 'Date' &&
      node.expression.name.text === 'now'
    )
      realTime.push(at(node));
    if (ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments ?? []).length === 0)
      realTime.push(at(node));
    if (ts.isIdentifier(node) && node.text === 'systemClock') systemClock.push(at(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { realTime, systemClock };
}

const readings = sourceFiles(SRC).map(readingsOf);

describe('the house rule: time through the clock', () => {
  it('reads the real time only in the listed places', () => {
    const unlisted = readings.flatMap((found) => found.realTime).filter((reading) => !(reading.file in REAL_TIME));
    expect(unlisted, 'take the time from an injected Clock, or list the file with its reason').toEqual([]);
  });

  it('lists no place that no longer reads it', () => {
    const reading = new Set(readings.flatMap((found) => found.realTime).map((found) => found.file));
    expect(Object.keys(REAL_TIME).filter((file) => !reading.has(file))).toEqual([]);
  });

  it('chooses the system clock only in the composition root', () => {
    const elsewhere = readings
      .flatMap((found) => found.systemClock)
      .filter((reading) => !COMPOSITION_ROOT.has(reading.file));
    expect(elsewhere, 'take a Clock as a dependency; server.ts and app.ts choose the system one').toEqual([]);
  });
});
