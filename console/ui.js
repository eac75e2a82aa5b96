// Shared pieces of the console: the html tag, formatting, and small components.
import { h } from './vendor/preact.mjs';
import htm from './vendor/htm.mjs';

export const html = htm.bind(h);

export const EVENT_TYPES = [
  'ticket.created',
  'rep.assigned',
  'job.scheduled',
  'schedule.updated',
  'job.dispatched',
  'job.completed',
  'deliverables.transmitted',
];
export const SCOPES = [
  'sites:read',
  'sites:write',
  'site-visits:read',
  'site-visits:write',
  'webhooks:read',
  'webhooks:write',
];

/** "2026-11-22 06:50:12" in the browser's time zone; "—" for nothing. */
export function when(iso) {
  if (!iso) return '—';
  const at = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
}

/**
 * Text a tenant chose (a ticket number, a site code, a rep name, a target URL, a receiver's error), with the
 * characters that change how text is shown made visible: a bidi override or another invisible format or
 * control character would let `STORE-\u202E21` pass for `STORE-12` on the operator's screen. Characters
 * Unicode says to render as nothing (a Hangul filler, a variation selector) and the line and paragraph
 * separators, which show as nothing here, are made visible too: the same set the service calls blank.
 */
export function shown(text, { lines = false } = {}) {
  if (text === null || text === undefined) return text;
  // With `lines`, a line feed (CRLF too) stays a line break: a message's text is written in lines.
  const written = lines ? String(text).replace(/\r\n/g, '\n') : String(text);
  return written.replace(/[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, (character) =>
    lines && character === '\n'
      ? character
      : `⟨U+${character.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
  );
}

/**
 * Text a tenant chose, shown(), in a box of its own (`.chosen`): a word of any length wraps inside its cell
 * instead of widening the table past the buttons, and accents stacked by the hundred on one letter (which draw
 * a line up or down the page, across other rows, the headings and the buttons) are cut at the box. `empty`
 * stands for no text. `lines`: text written in lines (a message), its line breaks kept, in a box that scrolls
 * past a screenful.
 */
export function Chosen({ text, empty = '—', lines = false }) {
  if (text === null || text === undefined || text === '') return empty;
  return html`<span class=${lines ? 'chosen lines' : 'chosen'}>${shown(text, { lines })}</span>`;
}

export function percent(rate) {
  return rate === null || rate === undefined ? '—' : `${Math.round(rate * 1000) / 10}%`;
}

/** A problem (or any error) from the last action, with its detail and field errors. */
export function ErrorBanner({ error }) {
  if (!error) return null;
  const fields = error.errors
    ? Object.entries(error.errors).map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    : [];
  return html`<div class="banner error" role="alert">
    <strong>${error.title || 'Error'}</strong> ${error.detail || error.message || ''}
    ${fields.length > 0 && html`<ul>${fields.map((line) => html`<li>${line}</li>`)}</ul>`}
  </div>`;
}

export function Badge({ value }) {
  return html`<span class=${`badge badge-${String(value).toLowerCase()}`}>${String(value)}</span>`;
}

/** A secret shown once: the operator copies it now; it cannot be read again. */
export function SecretOnce({ pair, onDone }) {
  return html`<div class="banner secret" data-testid="secret-once">
    <p><strong>New credential pair: the secret is shown once.</strong> Copy it now; only its hash is kept.</p>
    <dl>
      <dt>client_id</dt><dd><code data-testid="client-id">${pair.client_id}</code></dd>
      <dt>client_secret</dt><dd><code data-testid="client-secret">${pair.client_secret}</code></dd>
    </dl>
    <button type="button" onClick=${onDone}>I have copied it</button>
  </div>`;
}
