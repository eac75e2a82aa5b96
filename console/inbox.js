// The operator's inbox: the clients' latest messages, of every tenant or of one, read again while "Watch" is on,
// those not shown before marked new (seen.js), each leading to its visit's messages.
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, query } from './api.js';
import { useLoaded, useWatchedList } from './loading.js';
import { isSeen, markShown, readSeen } from './seen.js';
import { Chosen, ErrorBanner, html, shown, when } from './ui.js';

export const WATCH_MS = 5000;
export const LATEST = 50;

/** The latest LATEST messages, newest first, of every tenant or of `tenantId`'s; `full` when there may be more. */
export async function latestMessages(tenantId) {
  const messages = await api('GET', `/messages${query({ order: 'desc', limit: LATEST, tenantId })}`);
  return { messages, full: messages.length === LATEST, tenantId };
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

/**
 * Every tenant, or one: the tenants by name, as text (an option holds no markup; shown() makes a bidi override
 * visible), and an id typed into the address that names none kept as it is.
 */
function TenantFilter({ tenantId }) {
  const [tenants] = useLoaded(() => api('GET', '/tenants'), []);
  const known = (tenants ?? []).some((tenant) => tenant.id === tenantId);
  const choose = (event) => {
    location.hash = `#/messages${query({ tenantId: event.target.value })}`;
  };
  return html`<label>Tenant <select name="tenantId" value=${tenantId ?? ''} onChange=${choose}>
    <option value="">All tenants</option>
    ${tenantId && !known && html`<option value=${tenantId}>${shown(tenantId)}</option>`}
    ${(tenants ?? []).map((tenant) => html`<option value=${tenant.id}>${shown(tenant.name)}</option>`)}
  </select></label>`;
}

function Summary({ unseen, listed, full }) {
  const more = full && unseen === listed ? '+' : '';
  return html`<span data-testid="unseen-count">${unseen === 0 ? 'Nothing new' : `${unseen}${more} new`} since you last looked.</span>`;
}

export function InboxPage({ tenantId }) {
  const [watching, setWatching] = useState(true);
  // What was seen before this visit of the page (its first listing, when this browser never listed the inbox):
  // the marks are made against it; "Mark all as seen" moves it to what has been shown since.
  const [before, setBefore] = useState(readSeen);
  const [latest, error] = useWatchedList(() => latestMessages(tenantId), tenantId ?? '', watching, WATCH_MS);
  // On the screen is seen: the next visit, and the navigation's count, take it as looked at.
  useEffect(() => {
    if (!latest) return;
    const after = markShown(latest.messages, latest.full);
    if (!before) setBefore(after);
  }, [latest]);
  // A listing of the tenant chosen before is not shown under another (it is marked seen: it was on the screen).
  const messages = latest && latest.tenantId === tenantId ? latest.messages : undefined;
  // Until the first listing ever is kept as seen, nothing is new (rather than all of it, for a moment).
  const unseen = new Set(
    before ? (messages ?? []).filter((message) => !isSeen(before, message)).map((message) => message.messageId) : [],
  );

  return html`<section>
    <h1>Messages</h1>
    <div class="card bulk" aria-label="Inbox">
      <${TenantFilter} tenantId=${tenantId} />
      ${messages && html`<${Summary} unseen=${unseen.size} listed=${messages.length} full=${latest.full} />`}
      <button type="button" disabled=${unseen.size === 0} onClick=${() => setBefore(readSeen())}>Mark all as seen</button>
      <label class="watch"><input type="checkbox" checked=${watching} onChange=${(event) => setWatching(event.target.checked)} /> Watch (every 5 s)</label>
    </div>
    <${ErrorBanner} error=${error} />
    ${!messages && !error && html`<p class="muted">Loading messages…</p>`}
    ${messages && messages.length === 0 && html`<p class="muted">${tenantId ? 'No messages from this tenant yet' : 'No messages yet'}: clients send them about their visits (POST /api/v1/messages).</p>`}
    ${
      messages &&
      messages.length > 0 &&
      html`<p class="muted">The latest ${LATEST} messages, ${tenantId ? "this tenant's" : 'all tenants together'}, newest first; a visit's link opens its messages.</p>
    <table class="inbox">
      <thead><tr><th>Received</th><th>Tenant</th><th>Visit</th><th>Type</th><th>Message</th><th>Attachment</th></tr></thead>
      <tbody>${messages.map((message) => html`<${InboxRow} key=${message.messageId} message=${message} unseen=${unseen.has(message.messageId)} />`)}</tbody>
    </table>`
    }
  </section>`;
}
