// The navigation's count of the messages not yet shown in the inbox, read every few seconds on every page but the
// inbox of every tenant (which shows them, so there is nothing to count): one request of the latest page, the
// inbox's own (GET /admin/v1/messages, newest first, LATEST at most), counted against what seen.js keeps.
import { useEffect, useRef, useState } from './vendor/hooks.mjs';
import { LATEST, latestMessages, WATCH_MS } from './inbox.js';
import { markShown, readSeen, unseenCount, whenSeenChanges } from './seen.js';
import { html } from './ui.js';

/** The latest listing while not `idle`, read again every WATCH_MS while the page is visible; errors keep the last. */
function useLatest(idle) {
  const [latest, setLatest] = useState();
  const reading = useRef(false);
  useEffect(() => {
    if (idle) return undefined;
    let stopped = false;
    const read = async () => {
      if (reading.current || document.hidden) return;
      reading.current = true;
      try {
        const found = await latestMessages();
        // The first listing this browser ever reads is the start: nothing in it is new.
        if (!readSeen()) markShown(found.messages, found.full);
        if (!stopped) setLatest(found);
      } catch {
        // The count stays as it was; the inbox shows the error.
      } finally {
        reading.current = false;
      }
    };
    read();
    const timer = setInterval(read, WATCH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [idle]);
  return latest;
}

/** "Messages", with " (3)" when three of the latest are new ("50+" when every one of them is); none while `idle`. */
export function MessagesLink({ current, idle }) {
  const latest = useLatest(idle);
  const [seen, setSeen] = useState(readSeen);
  useEffect(() => whenSeenChanges(setSeen), []);
  const { count, more } = !idle && latest && seen ? unseenCount(seen, latest.messages, latest.full) : { count: 0 };
  const label = count === 0 ? 'Messages' : `Messages (${count}${more ? '+' : ''})`;
  return html`<a href="#/messages" aria-current=${current} data-testid="messages-link" title=${count === 0 ? undefined : `${count}${more ? ' or more' : ''} new of the latest ${LATEST}`}>${label}</a>`;
}
