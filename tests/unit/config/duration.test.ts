/** The one reader of durations in the configuration (src/config/duration.ts). */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/config.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['5s', 5_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['3d', 259_200_000],
    ['1.5h', 5_400_000],
    ['250', 250],
    ['0', 0],
    [' 3 d ', 259_200_000],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['3 days', 'an hour', '', '-5s', '1e3', '5S', '5sec', '5s5m', '.5h', 'soon'])(
    '%j is not a duration',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});
