/**
 * What a running `svc listen` follows (credentials.ts's movedPacket): the credential packet's new baseUrl for the
 * same client id, as a sandbox restarted on another port writes it; not an address set by SVC_BASE_URL, not a
 * packet that names another client, not a packet that cannot be read just now (the current address is kept).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { movedPacket } from '../../../packages/client/src/cli/credentials.js';

let file: string;
const write = (packet: object | string) =>
  fs.writeFileSync(file, typeof packet === 'string' ? packet : JSON.stringify(packet));
const packet = (baseUrl: string, clientId = 'cli_1') => ({ baseUrl, client_id: clientId, client_secret: 's3cret' });
const current = { baseUrl: 'http://127.0.0.1:3000', clientId: 'cli_1' };
const moved = (env: Record<string, string | undefined>) => movedPacket(env, current, (to) => to);

beforeEach(() => {
  file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'moved-packet-')), 'credentials.json');
});
afterEach(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));

it("follows the packet's new baseUrl for the same client, with a client for it", () => {
  write(packet('http://127.0.0.1:3001'));
  expect(moved({ SVC_CREDENTIALS_FILE: file })).toEqual({
    baseUrl: 'http://127.0.0.1:3001',
    client: { baseUrl: 'http://127.0.0.1:3001', clientId: 'cli_1', clientSecret: 's3cret' },
  });
});

it('follows nothing when nothing moved, the address is SVC_BASE_URL, another client, or an unreadable packet', () => {
  write(packet(current.baseUrl));
  expect(moved({ SVC_CREDENTIALS_FILE: file })).toBeUndefined();
  write(packet('http://127.0.0.1:3001'));
  expect(moved({ SVC_CREDENTIALS_FILE: file, SVC_BASE_URL: current.baseUrl })).toBeUndefined();
  expect(moved({})).toBeUndefined();
  write(packet('http://127.0.0.1:3001', 'cli_other'));
  expect(moved({ SVC_CREDENTIALS_FILE: file })).toBeUndefined();
  write('{"baseUrl": "http://127.0.0.1:30');
  expect(moved({ SVC_CREDENTIALS_FILE: file })).toBeUndefined();
  fs.rmSync(file);
  expect(moved({ SVC_CREDENTIALS_FILE: file })).toBeUndefined();
});
