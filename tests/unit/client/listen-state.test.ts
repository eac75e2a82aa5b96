/**
 * Where `svc listen` remembers its listener (listen/state.ts): a save is written 0600 through a temporary
 * file renamed over the state file, leaving no temporary file behind; a partial or garbled state file (a
 * write interrupted before saves were atomic, a disk filled up) is no remembered listener, so the command
 * opens a new one instead of failing. The signing secret is kept per client id, whatever the service's address,
 * and one an earlier svc kept per address and client id is adopted.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ListenerState,
  type RememberedListener,
  SigningSecret,
} from '../../../packages/client/src/cli/listen/state.js';

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

describe('SigningSecret', () => {
  it('is one secret per client id: the same sandbox at another address (another port, localhost) has it', () => {
    const made = new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://127.0.0.1:3000' }, directory).get();
    expect(new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://127.0.0.1:3001' }, directory).get()).toBe(made);
    expect(new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://localhost:3000' }, directory).get()).toBe(made);
    expect(new SigningSecret({ clientId: 'cli_b', baseUrl: 'http://127.0.0.1:3000' }, directory).get()).not.toBe(made);
  });

  it("adopts the secret an earlier svc kept for the address and client id, so the receiver's still verifies", () => {
    // The earlier name: signing-secret- and 16 hex digits of the SHA-256 of the JSON [baseUrl, clientId].
    const identity = JSON.stringify(['http://127.0.0.1:3000', 'cli_a']);
    const earlier = `signing-secret-${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`;
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(directory, earlier), 'whsec_kept_by_an_earlier_svc\n', { mode: 0o600 });
    const secret = new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://127.0.0.1:3000' }, directory);
    expect(secret.get()).toBe('whsec_kept_by_an_earlier_svc');
    // Kept under the client id from now on: another address has it too, and --new-secret replaces it.
    expect(new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://127.0.0.1:3001' }, directory).get()).toBe(
      'whsec_kept_by_an_earlier_svc',
    );
    const renewed = secret.renew();
    expect(renewed).not.toBe('whsec_kept_by_an_earlier_svc');
    expect(new SigningSecret({ clientId: 'cli_a', baseUrl: 'http://127.0.0.1:3000' }, directory).get()).toBe(renewed);
  });
});
