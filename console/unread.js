// The navigation's count of the clients' messages no one of the operator's team has handled yet: one bounded
// request (GET /admin/v1/messages/unhandled-count) every COUNT_MS while the page is visible, and again at once
// when the inbox marks messages (recount). A failed read keeps the last count, shown as stale ("3?") until the
// next one succeeds: silently kept, it would say "nothing to do" while no one knows.
import { useEffect } from './vendor/hooks.mjs';
import { api } from './api.js';
import { useWatchedList } from './loading.js';
import { html, when } from './ui.js';

const COUNT_MS = 5000;

/** The counts shown now (one per navigation; one in practice), read again by `recount()`. */
const counts = new Set();

/** Reads the count again now: the inbox marked messages, so it changed. */
export function recount() {
  for (const load of counts) load();
}

async function readCount() {
  const count = await api('GET', '/messages/unhandled-count');
  return { ...count, at: new Date() };
}

/** "Messages", with " (3)" while three are not handled ("1000+" past the count's limit), "(3?)" when stale. */
export function MessagesLink({ current }) {
  const [count, error, load] = useWatchedList(readCount, '', true, COUNT_MS);
  useEffect(() => {
    counts.add(load);
    return () => counts.delete(load);
  }, [load]);
  const number = count ? `${count.unhandled}${count.more ? '+' : ''}` : '';
  let label = count && count.unhandled > 0 ? `Messages (${number})` : 'Messages';
  let title = count && count.unhandled > 0 ? `${number} not handled yet` : undefined;
  if (error) {
    label = `Messages (${number}?)`;
    const since = count ? `; the last count (${number}) was read at ${when(count.at)}` : '';
    title = `The count could not be read (${error.title || error.message || 'error'})${since}. Trying again.`;
  }
  return html`<a href="#/messages" aria-current=${current} data-testid="messages-link" data-stale=${error ? 'true' : undefined} title=${title}>${label}</a>`;
}
