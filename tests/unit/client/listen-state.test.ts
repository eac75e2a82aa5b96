/**
 * Where `svc listen` remembers its listener (listen/state.ts): a save is written 0600 through a temporary
 * file renamed over the state file, leaving no temporary file behind; a partial or garbled state file (a
 * write interrupted before saves were atomic, a disk filled up) is no remembered listener, so the command
 * opens a new one instead of failing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListenerState, type RememberedListener } from '../../../packages/client/src/cli/listen/state.js';

const listener: RememberedListener = {
  id: 'lst_1',
  secret: 'whsec_0123456789abcdef',
  streamPath: '/api/v1/webhook-listeners/lst_1/stream',
  graceSeconds: 30,
};

let directory: string;

beforeEach(() => {
  directory = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'listen-state-')), 'svc');
});
afterEach(() => {
  fs.rmSync(path.dirname(directory), { recursive: true, force: true });
});

describe('ListenerState', () => {
  it('saves through a temporary file: the state reads back, 0600, and nothing else is left in the directory', () => {
    const state = new ListenerState(['https://example.test', 'client'], directory);
    state.save(listener);
    state.save({ ...listener, id: 'lst_2' });
    expect(state.read()).toEqual({ ...listener, id: 'lst_2' });
    expect(fs.readdirSync(directory)).toEqual([path.basename(state.file)]);
    if (process.platform !== 'win32') {
      expect(fs.statSync(state.file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(directory).mode & 0o777).toBe(0o700);
    }
  });

  it('a save that fails leaves no temporary file behind', () => {
    const state = new ListenerState(['https://example.test', 'client'], directory);
    // The state file's name taken by a directory that is not empty: the rename over it fails.
    fs.mkdirSync(path.join(state.file, 'occupied'), { recursive: true });
    expect(() => state.save(listener)).toThrow();
    expect(fs.readdirSync(directory)).toEqual([path.basename(state.file)]);
  });

  it.each([
    ['a partial file', JSON.stringify(listener).slice(0, 25)],
    ['an empty file', ''],
    ['garbled bytes', '\u0000\u0000\u0000{'],
    ['JSON without a listener', '{"id":"lst_1"}'],
    ['JSON that is not an object', 'null'],
  ])('%s is no remembered listener', (_name, content) => {
    const state = new ListenerState(['https://example.test', 'client'], directory);
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(state.file, content);
    expect(state.read()).toBeUndefined();
    // And the next save replaces it.
    state.save(listener);
    expect(state.read()).toEqual(listener);
  });
});
