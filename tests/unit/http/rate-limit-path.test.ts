/**
 * How the rate limit reads a request target that no route matched: every spelling of a path under
 * /api/v1 is under /api/v1, and paths outside it stay outside.
 */
import { describe, expect, it } from 'vitest';
import { isClientApiPath, normalisedPath } from '../../../src/http/rate-limit.js';

describe('normalisedPath', () => {
  it.each([
    ['/api/v1/sites', '/api/v1/sites'],
    ['/%61pi/v1/sites', '/api/v1/sites'],
    ['/%61%70%69/%76%31/nothing', '/api/v1/nothing'],
    ['http://any/api/v1/sites', '/api/v1/sites'],
    ['HTTPS://any:443/%61pi/v1/x?y=1', '/api/v1/x'],
    ['//api//v1///sites', '/api/v1/sites'],
    ['/x/../api/v1/./sites', '/api/v1/sites'],
    ['/api/v1/x/%2e%2e/%2E/sites', '/api/v1/sites'],
    ['/api%2Fv1%2Fsites', '/api/v1/sites'],
    ['/api\\v1\\sites', '/api/v1/sites'],
    ['/API/V1/Sites/', '/api/v1/sites'],
    ['/api/v1?probe=1', '/api/v1'],
    ['/api/v1#fragment', '/api/v1'],
    ['/../../api/v1', '/api/v1'],
    ['/api/v1/%zz/%', '/api/v1/%zz/%'],
    ['*', '/*'],
    ['/api/v1/../../health', '/health'],
  ])('%s → %s', (target, path) => {
    expect(normalisedPath(target)).toBe(path);
  });
});

describe('isClientApiPath', () => {
  it.each([
    ['/api/v1', true],
    ['/api/v1/', true],
    ['/api/v1/sites/:id', true],
    ['/api/v10', false],
    ['/api/v1x/sites', false],
    ['/api', false],
    ['/admin/v1/tenants', false],
    ['/health', false],
  ])('%s: %s', (path, counted) => {
    expect(isClientApiPath(path)).toBe(counted);
  });
});
