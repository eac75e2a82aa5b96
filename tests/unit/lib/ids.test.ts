import { describe, expect, it } from 'vitest';
import { hasSecretShape, newId, newSecret } from '../../../src/lib/ids.js';

describe('newId', () => {
  it('gives prefixed 128-bit ids, all different, also across refills of its entropy buffer', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('site'));
    for (const id of ids) expect(id).toMatch(/^site_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('hasSecretShape', () => {
  it('holds for every secret newSecret gives, with its prefix', () => {
    for (let index = 0; index < 200; index++) {
      const secret = newSecret('secret');
      expect(secret).toMatch(/^secret_[0-9a-hjkmnp-tv-z]{52}$/);
      expect(hasSecretShape('secret', secret)).toBe(true);
      expect(hasSecretShape('whsec', secret)).toBe(false);
    }
  });

  it('fails one character short or long, outside the alphabet, or without the prefix', () => {
    const secret = newSecret('secret');
    const body = secret.slice('secret_'.length);
    for (const other of [
      secret.slice(0, -1),
      `${secret}0`,
      `secret_${body.slice(0, -1)}u`,
      `secret_${body.slice(0, -1)}I`,
      secret.toUpperCase(),
      `secret-${body}`,
      body,
      `${body}secret_`,
      'secret_',
      '',
    ]) {
      expect(hasSecretShape('secret', other), other).toBe(false);
    }
  });
});
