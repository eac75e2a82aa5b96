/** What a reader sees of a text: blank when nothing shows; two texts that look the same compare equal. */
import { expect, it } from 'vitest';
import { isBlank, seenAs } from '../../../src/lib/visible-text.js';

it('a text of white space and characters that render as nothing is blank; one with anything else is not', () => {
  for (const text of ['', ' ', '\u3000', '\u200b', '\u202e\ufeff', '\u00a0\u2060', '\t\n'])
    expect(isBlank(text)).toBe(true);
  for (const text of ['a', '\u200ba', 'دو\u200cست', '·']) expect(isBlank(text)).toBe(false);
});

it('seenAs drops what renders as nothing, folds white space and case', () => {
  expect(seenAs('\u200bAwaiting  Reassignment\u202e ')).toBe('awaiting reassignment');
  expect(seenAs('Awaiting\u00a0re\u200dassignment')).toBe('awaiting reassignment');
  expect(seenAs('Ada Lovelace')).toBe('ada lovelace');
  expect(seenAs('Ada')).not.toBe(seenAs('Adam'));
});
