/** The console's byte counts (console/sizes.js, a browser module without imports, loaded here as it is). */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from 'vitest';

let sizeText: (bytes: number) => string;
beforeAll(async () => {
  ({ sizeText } = await import(pathToFileURL(path.resolve('console/sizes.js')).href));
});

it.each([
  [0, '0 bytes'],
  [1, '1 byte'],
  [373, '373 bytes'],
  [1023, '1023 bytes'],
  [1024, '1.0 KiB'],
  [12_600, '12.3 KiB'],
  [1024 * 1024, '1.0 MiB'],
  [4.5 * 1024 * 1024, '4.5 MiB'],
])('%i bytes read as %s', (bytes, text) => {
  expect(sizeText(bytes)).toBe(text);
});
