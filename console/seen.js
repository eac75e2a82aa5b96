// Which of the clients' messages the operator has looked at, kept in this browser: the inbox marks the others new
// and the navigation counts them. Plain functions over a plain value, and the one copy the page shares.
//
// Kept by id, not by place: a message's place in arrival order (and its time) is given before its create commits,
// so one committed just after a later one was listed sorts below what was shown. A mark "everything below the
// newest shown" never showed it as new; it is new here until it is shown itself.

/** Where the browser keeps it: message ids and times only, nothing of a tenant's text, never the token. */
export const SEEN_KEY = 'site-services.console.inbox.seen';

/**
 * How many ids are remembered (about 30 kB). Past it the oldest are forgotten and the floor rises to them: a
 * message created before the floor counts as seen. So a message is missed only if it commits after this many
 * newer ones were shown, which no create stays open for.
 */
export const KEEP = 500;

/**
 * The state: `shown`, [messageId, createdAt] pairs, newest createdAt first, at most KEEP; `floor`, a createdAt at
 * or before which every message counts as seen (null: none). undefined: this browser never listed the inbox.
 */
export function isSeen(seen, message) {
  if (!seen) return false;
  return (
    seen.shown.some(([id]) => id === message.messageId) || (seen.floor !== null && message.createdAt <= seen.floor)
  );
}

/**
 * The state once `messages` (one listing, newest first) have been shown. The first listing ever is all seen,
 * and, when it is `full` (as many as asked for, so older ones exist), so is everything created before its oldest.
 * Answers `seen` itself when nothing changes.
 */
export function remember(seen, messages, full) {
  const fresh = messages.filter((message) => !seen?.shown.some(([id]) => id === message.messageId));
  if (seen && fresh.length === 0) return seen;
  const oldest = messages.reduce(
    (at, message) => (at === null || message.createdAt < at ? message.createdAt : at),
    null,
  );
  let floor = seen ? seen.floor : full ? oldest : null;
  const shown = [...(seen?.shown ?? []), ...fresh.map((message) => [message.messageId, message.createdAt])];
  shown.sort(([, a], [, b]) => (a < b ? 1 : a > b ? -1 : 0));
  for (const [, createdAt] of shown.splice(KEEP)) if (floor === null || createdAt > floor) floor = createdAt;
  return { shown, floor };
}

/** How many of `messages` are not seen; `more` when every one of a full listing is not (there may be more). */
export function unseenCount(seen, messages, full) {
  const count = messages.filter((message) => !isSeen(seen, message)).length;
  return { count, more: full && count === messages.length };
}

/** The state from what storage holds (null, not JSON, another shape: undefined, as if nothing were kept). */
export function parseSeen(value) {
  try {
    const kept = JSON.parse(value);
    if (Array.isArray(kept?.shown) && (kept.floor === null || typeof kept.floor === 'string')) {
      const pairs = kept.shown.filter((pair) => typeof pair?.[0] === 'string' && typeof pair[1] === 'string');
      return { shown: pairs.slice(0, KEEP), floor: kept.floor };
    }
    // What earlier consoles kept: the newest message shown, everything created up to it seen.
    if (typeof kept?.messageId === 'string' && typeof kept.createdAt === 'string')
      return { shown: [[kept.messageId, kept.createdAt]], floor: kept.createdAt };
  } catch {
    // Not JSON: as if nothing were kept.
  }
  return undefined;
}

/** The page's copy: storage may refuse (private mode, full), and then it lasts as long as the page. */
let current;
let loaded = false;
const listeners = new Set();

export function readSeen() {
  if (!loaded) {
    loaded = true;
    try {
      current = parseSeen(localStorage.getItem(SEEN_KEY));
    } catch {
      current = undefined;
    }
  }
  return current;
}

/** Records that `messages` (one listing of `full` length) were on the screen, and tells whoever counts. */
export function markShown(messages, full) {
  const before = readSeen();
  const after = remember(before, messages, full);
  if (after === before) return after;
  current = after;
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify(after));
  } catch {
    // Kept in this page only: see `current`.
  }
  for (const listener of listeners) listener(after);
  return after;
}

/** Calls `listener` with the state whenever it changes here or in another of this browser's tabs. */
export function whenSeenChanges(listener) {
  listeners.add(listener);
  const other = (event) => {
    if (event.key !== SEEN_KEY) return;
    current = parseSeen(event.newValue);
    listener(current);
  };
  addEventListener('storage', other);
  return () => {
    listeners.delete(listener);
    removeEventListener('storage', other);
  };
}
