/**
 * `svc listen` on a Node.js without a global WebSocket (20, or 22.0 to 22.3): the other commands run there, so
 * an integrator meets this one first as a crash after a listener was opened. It says so before any request.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../packages/client/src/cli/main.js';
import { missingWebSocket } from '../../../packages/client/src/cli/listen/stream.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('svc listen without a WebSocket client', () => {
  it('says which Node.js it needs, sends nothing and exits with the usage code', async () => {
    vi.stubGlobal('WebSocket', undefined);
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    const fetch = vi.fn(() => Promise.reject(new Error('svc sent a request')));
    const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_CLIENT_ID: 'cli_x', SVC_CLIENT_SECRET: 'secret_x' };
    const code = await main(['listen', '--forward-to', 'http://localhost:8080/webhooks'], env, { fetch });
    expect(code).toBe(2);
    expect(fetch).not.toHaveBeenCalled();
    expect(stderr).toContain(`this Node.js (${process.version}) has no WebSocket client`);
    expect(stderr).toContain('Node.js 22.4 or newer');
    expect(stderr).not.toContain('ReferenceError');
  });

  it('says nothing where the global WebSocket exists', () => {
    expect(missingWebSocket()).toBeUndefined();
    vi.stubGlobal('WebSocket', undefined);
    expect(missingWebSocket('v20.20.2')).toMatch(/^svc listen: this Node\.js \(v20\.20\.2\)/);
  });
});
