/**
 * timestamptz values read from PostgreSQL, parsed without regular expressions and formatted without
 * `Date.prototype.toISOString`. pg's own parser (postgres-date: three regular expressions, a Date) and
 * then `toISOString` for the representation were about a third of a page of 100 sites' CPU. The text
 * PostgreSQL sends in UTC ("2026-11-25 23:38:17.544638+00") already holds every digit of the ISO form
 * ("2026-11-25T23:38:17.544Z"), so a `StoredTimestamp` keeps that text and formats it on demand.
 *
 * Same values as before: the Date's time is the one postgres-date computes (its milliseconds are
 * `trunc(1000 * parseFloat(fraction))`, which is the fraction's first three digits for every fraction of
 * one to six digits), and the ISO string is the one `toISOString` of that Date returns. Any other text (a
 * session time zone other than UTC, years before 1000 or after 9999, BC, infinity) goes to pg's parser.
 */
import pg from 'pg';

const ZERO = 48;
const fallback = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => unknown;

/** A Date read from the database that remembers its ISO form, as long as nobody changes its time. */
export class StoredTimestamp extends Date {
  readonly #text: string;
  readonly #time: number;

  constructor(time: number, text: string) {
    super(time);
    this.#time = time;
    this.#text = text;
  }

  override toISOString(): string {
    // A Date is mutable (setTime and friends): after a change, the text no longer describes it.
    if (this.getTime() !== this.#time) return super.toISOString();
    const text = this.#text;
    // "YYYY-MM-DD HH:MM:SS" then an optional ".f" to ".ffffff", then "+00".
    const fractionDigits = text.length - 23;
    const milliseconds = fractionDigits <= 0 ? '000' : text.slice(20, 20 + Math.min(fractionDigits, 3)).padEnd(3, '0');
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${milliseconds}Z`;
  }
}

function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let index = from; index < to; index++) {
    const digit = text.charCodeAt(index) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** pg's text parser for timestamptz (oid 1184). */
export function parseTimestamptz(text: string): unknown {
  const length = text.length;
  // Digits after the point: "YYYY-MM-DD HH:MM:SS" (19) + "." + digits + "+00" (3).
  const fractionDigits = length - 23;
  const shaped =
    (length === 22 || (fractionDigits >= 1 && fractionDigits <= 6 && text.charCodeAt(19) === 46)) &&
    text.charCodeAt(4) === 45 &&
    text.charCodeAt(7) === 45 &&
    text.charCodeAt(10) === 32 &&
    text.charCodeAt(13) === 58 &&
    text.charCodeAt(16) === 58 &&
    text.endsWith('+00');
  if (!shaped) return fallback(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const fraction = fractionDigits > 0 ? digits(text, 20, 20 + Math.min(fractionDigits, 3)) : 0;
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || fraction < 0) {
    return fallback(text);
  }
  if (fractionDigits > 3 && digits(text, 23, 20 + fractionDigits) < 0) return fallback(text);
  const milliseconds = fractionDigits <= 0 ? 0 : fraction * 10 ** (3 - Math.min(fractionDigits, 3));
  return new StoredTimestamp(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds), text);
}
