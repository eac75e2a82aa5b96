/**
 * A tenant's name must show something (adversarial probe): a name of only white space or invisible characters
 * (bidi controls, zero-width characters, the byte-order mark, fillers) is 422 naming `name`, on create and on
 * PATCH, before the tenant is looked up; real names in any script, with such characters inside, are kept as
 * given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLANK_NAME_MESSAGE } from '../../src/modules/tenants/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalid } from '../helpers/problems.js';
import { admin, createTenant } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const BLANK: [string, string][] = [
  ['spaces', '   '],
  ['tab and line breaks', '\t\r\n'],
  ['no-break and ideographic spaces', '\u00a0\u3000'],
  ['line and paragraph separators', '\u2028\u2029'],
  ['a right-to-left override', '\u202e'],
  ['bidi isolates and marks', '\u2066\u2069\u200e\u200f\u061c'],
  ['zero-width space, joiners, word joiner', '\u200b\u200c\u200d\u2060'],
  ['a byte-order mark between spaces', ' \ufeff '],
  ['a soft hyphen', '\u00ad'],
  ['variation selectors', '\ufe0f\u{e0100}'],
  ['a Hangul filler', '\u3164'],
  ['tag characters', '\u{e0061}\u{e007f}'],
  ['control characters', '\u0001\u007f'],
];

const REAL = [
  'Acme Retail',
  'Ωμέγα Υπηρεσίες',
  '株式会社テスト',
  'شركة الخدمات',
  'חברה בע"מ',
  'Кофейня №1',
  'मेरी दुकान',
  'Cafe\u0301 Zoe\u0308', // combining accents
  'می\u200cخواهم', // a zero-width non-joiner inside a Persian word
  'Acme \u200f(שלום)', // a bidi mark between scripts
  '\u202eRTL Override Ltd\u202c', // invisible characters around a visible name are kept as given
  '👩\u200d💻 Dev Shop', // an emoji sequence joined by ZWJ
  '   Padded   ',
];

describe('blank tenant names', () => {
  it.each(BLANK)('%s: 422 naming name on create', async (_label, name) => {
    const errors = expectInvalid(await admin(t, 'POST', '/admin/v1/tenants', { name }), ['name']);
    expect(errors.name).toEqual([BLANK_NAME_MESSAGE]);
  });

  it.each(BLANK)('%s: 422 naming name on PATCH, nothing changes', async (_label, name) => {
    const { tenantId } = await createTenant(t, { name: 'Before' });
    const errors = expectInvalid(await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { name }), ['name']);
    expect(errors.name).toEqual([BLANK_NAME_MESSAGE]);
    expect((await admin(t, 'GET', `/admin/v1/tenants/${tenantId}`)).body.data.name).toBe('Before');
  });

  it('a blank name is 422 before an unknown tenant is 404 (body first, as elsewhere)', async () => {
    expectInvalid(await admin(t, 'PATCH', '/admin/v1/tenants/tnt_unknown', { name: '\u202e' }), ['name']);
  });

  it('the other members of the PATCH still apply without a name', async () => {
    const { tenantId } = await createTenant(t, { name: 'Kept' });
    const response = await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { apiEnabled: false });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({ name: 'Kept', apiEnabled: false });
  });
});

describe('real names', () => {
  it.each(REAL)('%j is accepted and stored as given, on create and PATCH', async (name) => {
    const created = await admin(t, 'POST', '/admin/v1/tenants', { name });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.name).toBe(name);
    const { tenantId } = created.body.data;
    const patched = await admin(t, 'PATCH', `/admin/v1/tenants/${tenantId}`, { name: `${name} 2` });
    expect(patched.status, patched.text).toBe(200);
    expect((await admin(t, 'GET', `/admin/v1/tenants/${tenantId}`)).body.data.name).toBe(`${name} 2`);
  });
});
