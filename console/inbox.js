// The operator's inbox: the clients' latest messages of every tenant, read again while "Watch" is on, those that
// arrived since the operator last looked marked new, each leading to its visit's messages.
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, query } from './api.js';
import { useWatchedList } from './loading.js';
import { Chosen, ErrorBanner, html, when } from './ui.js';

const WATCH_MS = 5000;
const LATEST = 50;

/**
 * The newest message the operator has seen here ({messageId, createdAt}), kept in this browser (an id and a time:
 * nothing of a tenant's text, and never the token). Without storage (refused, full) nothing is kept: every message
 * is new again on the next visit.
 */
const SEEN_KEY = 'site-services.console.inbox.seen';

function readSeen() {
  try {
    const seen = JSON.parse(localStorage.getItem(SEEN_KEY));
    return typeof seen?.messageId === 'string' && typeof seen.createdAt === 'string' ? seen : undefined;
  } catch {
    return undefined;
  }
}

function keepSeen(message) {
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify({ messageId: message.messageId, createdAt: message.createdAt }));
  } catch {
    // Not kept: see SEEN_KEY.
  }
}

/**
 * Which of the messages (newest first) arrived after `seen`: those above it when it is listed, else those written
 * after it (it is older than the page). Nothing seen yet: all of them.
 */
function unseenIds(messages, seen) {
  if (!seen) return new Set(messages.map((message) => message.messageId));
  const at = messages.findIndex((message) => message.messageId === seen.messageId);
  const newer = at >= 0 ? messages.slice(0, at) : messages.filter((message) => message.createdAt > seen.createdAt);
  return new Set(newer.map((message) => message.messageId));
}

function InboxRow({ message, unseen }) {
  const visitLink = `#/visits/${encodeURIComponent(message.siteVisitId)}`;
  const preview = message.previewTruncated ? `${message.preview}…` : message.preview;
  return html`<tr data-inbox-message=${message.messageId} data-unseen=${unseen ? 'true' : undefined} class=${unseen ? 'unseen' : undefined}>
    <td class="sent">${when(message.createdAt)}${unseen && html` <span class="badge badge-unseen">new</span>`}</td>
    <td><a href=${`#/tenants/${encodeURIComponent(message.tenantId)}`}><${Chosen} text=${message.tenantName} /></a>
      <div class="muted"><${Chosen} text=${message.sender} /></div></td>
    <td><a href=${visitLink} data-action="visit-messages"><code><${Chosen} text=${message.clientTicketNumber} empty=${message.siteVisitId} /></code></a></td>
    <td>${message.type ?? '—'}<div class="muted">${message.urgency ?? ''}</div></td>
    <td class="message-text"><${Chosen} text=${preview} lines=${true} /></td>
    <td>${message.hasFileAttachment ? 'yes' : '—'}</td>
  </tr>`;
}

export function InboxPage() {
  const [watching, setWatching] = useState(true);
  // What was seen before this visit of the page: the marks are made against it, and "Mark all as seen" moves it.
  const [seen, setSeen] = useState(readSeen);
  const [messages, error] = useWatchedList(
    () => api('GET', `/messages${query({ order: 'desc', limit: LATEST })}`),
    'inbox',
    watching,
    WATCH_MS,
  );
  const newest = messages?.[0];
  // On the screen is seen: the next visit marks only what arrives after the newest shown now.
  useEffect(() => {
    if (newest) keepSeen(newest);
  }, [newest?.messageId]);
  const unseen = messages ? unseenIds(messages, seen) : new Set();

  return html`<section>
    <h1>Messages</h1>
    <div class="card bulk" aria-label="Inbox">
      <span data-testid="unseen-count">${unseen.size === 0 ? 'Nothing new' : `${unseen.size} new`} since you last looked.</span>
      <button type="button" disabled=${unseen.size === 0} onClick=${() => setSeen(newest && { messageId: newest.messageId, createdAt: newest.createdAt })}>Mark all as seen</button>
      <label class="watch"><input type="checkbox" checked=${watching} onChange=${(event) => setWatching(event.target.checked)} /> Watch (every 5 s)</label>
    </div>
    <${ErrorBanner} error=${error} />
    ${messages && messages.length === 0 && html`<p class="muted">No messages yet: clients send them about their visits (POST /api/v1/messages).</p>`}
    ${
      messages &&
      messages.length > 0 &&
      html`<p class="muted">The latest ${LATEST} messages, all tenants together, newest first; a visit's link opens its messages.</p>
    <table class="inbox">
      <thead><tr><th>Received</th><th>Tenant</th><th>Visit</th><th>Type</th><th>Message</th><th>Attachment</th></tr></thead>
      <tbody>${messages.map((message) => html`<${InboxRow} key=${message.messageId} message=${message} unseen=${unseen.has(message.messageId)} />`)}</tbody>
    </table>`
    }
  </section>`;
}
