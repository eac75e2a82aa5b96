// The operator's inbox: the clients' latest messages, of every tenant or of one, those not handled yet unless
// chosen otherwise, read again while "Watch" is on. "Mark handled" is the operator's shared state (every person and
// browser sees it, and the navigation counts what is left); "new" marks what arrived while this page was open.
import { useEffect, useState } from './vendor/hooks.mjs';
import { arrivals } from './arrivals.js';
import { api, query } from './api.js';
import { useAction, useLoaded, useWatchedList } from './loading.js';
import { Chosen, ErrorBanner, html, shown, when } from './ui.js';
import { recount } from './unread.js';

export const WATCH_MS = 5000;
export const LATEST = 50;

/** What the inbox lists (#/messages?show=…): not handled yet (the default), handled, or all. */
const SHOWN = { unhandled: 'Not handled', handled: 'Handled', all: 'All' };
const HANDLED_PARAM = { unhandled: 'false', handled: 'true', all: undefined };

/** The latest LATEST messages, newest first, of every tenant or of `tenantId`'s, as `show` chooses. */
export async function latestMessages(tenantId, show) {
  const handled = HANDLED_PARAM[show];
  const messages = await api('GET', `/messages${query({ order: 'desc', limit: LATEST, tenantId, handled })}`);
  return { messages, key: filterKey(tenantId, show) };
}

const filterKey = (tenantId, show) => `${tenantId ?? ''} ${show}`;

/**
 * Marks the messages handled (or not again) for the whole operator, each at the version this page showed, then
 * counts again. Answers the ids of those a client changed since they were read: left as they are (the change made
 * them not handled), to be read again rather than marked unseen.
 */
async function markHandled(messages, handled) {
  const seen = messages.map(({ messageId, version }) => ({ messageId, version }));
  const { stale } = await api('POST', '/messages/handled', { messages: seen, handled });
  recount();
  return new Set(stale.map((message) => message.messageId));
}

function InboxRow({ message, arrived, changed, busy, mark }) {
  const visitLink = `#/visits/${encodeURIComponent(message.siteVisitId)}`;
  const preview = message.previewTruncated ? `${message.preview}…` : message.preview;
  const handled = message.handledAt !== null;
  return html`<tr data-inbox-message=${message.messageId} data-arrived=${arrived ? 'true' : undefined} data-handled=${handled ? 'true' : undefined} data-changed=${changed ? 'true' : undefined} class=${arrived ? 'arrived' : undefined}>
    <td class="sent">${when(message.createdAt)}${arrived && html` <span class="badge badge-arrived" title="Arrived since you opened this page">new</span>`}${changed && html` <span class="badge badge-changed" title="The client changed it after this page showed it: not marked">changed</span>`}</td>
    <td><a href=${`#/tenants/${encodeURIComponent(message.tenantId)}`}><${Chosen} text=${message.tenantName} /></a>
      <div class="muted"><${Chosen} text=${message.sender} /></div></td>
    <td><a href=${visitLink} data-action="visit-messages"><code><${Chosen} text=${message.clientTicketNumber} empty=${message.siteVisitId} /></code></a></td>
    <td>${message.type ?? '—'}<div class="muted">${message.urgency ?? ''}</div></td>
    <td class="message-text"><${Chosen} text=${preview} lines=${true} /></td>
    <td>${message.hasFileAttachment ? 'yes' : '—'}</td>
    <td class="handled">${
      handled
        ? html`<span class="muted">handled ${when(message.handledAt)}</span>
          <button type="button" class="link" disabled=${busy} onClick=${() => mark([message], false)}>Not handled</button>`
        : html`<button type="button" disabled=${busy} onClick=${() => mark([message], true)}>Mark handled</button>`
    }</td>
  </tr>`;
}

/**
 * Every tenant, or one: the tenants by name, as text (an option holds no markup; shown() makes a bidi override
 * visible), and an id typed into the address that names none kept as it is.
 */
function TenantFilter({ tenantId, show }) {
  const [tenants] = useLoaded(() => api('GET', '/tenants'), []);
  const known = (tenants ?? []).some((tenant) => tenant.id === tenantId);
  const choose = (event) => {
    location.hash = `#/messages${query({ tenantId: event.target.value, show })}`;
  };
  return html`<label>Tenant <select name="tenantId" value=${tenantId ?? ''} onChange=${choose}>
    <option value="">All tenants</option>
    ${tenantId && !known && html`<option value=${tenantId}>${shown(tenantId)}</option>`}
    ${(tenants ?? []).map((tenant) => html`<option value=${tenant.id}>${shown(tenant.name)}</option>`)}
  </select></label>`;
}

function ShowFilter({ tenantId, show }) {
  const choose = (event) => {
    const chosen = event.target.value === 'unhandled' ? undefined : event.target.value;
    location.hash = `#/messages${query({ tenantId, show: chosen })}`;
  };
  return html`<label>Show <select name="show" value=${show} onChange=${choose}>
    ${Object.entries(SHOWN).map(([value, label]) => html`<option value=${value}>${label}</option>`)}
  </select></label>`;
}

export function InboxPage({ tenantId, show: asked }) {
  const show = asked in SHOWN ? asked : 'unhandled';
  const key = filterKey(tenantId, show);
  const [watching, setWatching] = useState(true);
  const [latest, error, load] = useWatchedList(() => latestMessages(tenantId, show), key, watching, WATCH_MS);
  const { error: failed, busy, run } = useAction(load);
  // What the last mark left because a client changed it after it was shown (this filter's; the page re-reads).
  const [changedState, setChangedState] = useState({ key, ids: new Set() });
  const changed = changedState.key === key ? changedState.ids : new Set();
  const mark = (list, handled) => run(async () => setChangedState({ key, ids: await markHandled(list, handled) }));
  const [arrivalState, setArrivalState] = useState();
  useEffect(() => {
    if (latest)
      setArrivalState((state) =>
        arrivals(
          state,
          latest.key,
          latest.messages.map((message) => message.messageId),
        ),
      );
  }, [latest]);
  // A listing of the filter chosen before is not shown under another.
  const messages = latest && latest.key === key ? latest.messages : undefined;
  const arrived = arrivalState?.key === key ? arrivalState.arrived : new Set();
  const open = (messages ?? []).filter((message) => message.handledAt === null);
  const none = show === 'handled' ? 'No handled messages' : show === 'unhandled' ? 'Nothing to handle' : 'No messages';

  return html`<section>
    <h1>Messages</h1>
    <div class="card bulk" aria-label="Inbox">
      <${TenantFilter} tenantId=${tenantId} show=${show === 'unhandled' ? undefined : show} />
      <${ShowFilter} tenantId=${tenantId} show=${show} />
      <button type="button" disabled=${busy || open.length === 0} onClick=${() => mark(open, true)}>Mark all listed handled${open.length > 0 ? ` (${open.length})` : ''}</button>
      <label class="watch"><input type="checkbox" checked=${watching} onChange=${(event) => setWatching(event.target.checked)} /> Watch (every 5 s)</label>
    </div>
    <${ErrorBanner} error=${failed ?? error} />
    ${changed.size > 0 && html`<div class="banner notice" role="status" data-changed-notice>${changed.size === 1 ? 'One message was' : `${changed.size} messages were`} changed by the client after this page showed ${changed.size === 1 ? 'it' : 'them'}, so ${changed.size === 1 ? 'it was' : 'they were'} left as ${changed.size === 1 ? 'it is' : 'they are'}: read ${changed.size === 1 ? 'it' : 'them'} again below ("changed").</div>`}
    ${!messages && !error && html`<p class="muted">Loading messages…</p>`}
    ${messages && messages.length === 0 && html`<p class="muted">${none}${tenantId ? ' from this tenant' : ''}: clients send messages about their visits (POST /api/v1/messages).</p>`}
    ${
      messages &&
      messages.length > 0 &&
      html`<p class="muted">The latest ${LATEST}${show === 'all' ? '' : ` ${SHOWN[show].toLowerCase()}`} messages, ${tenantId ? "this tenant's" : 'all tenants together'}, newest first; "Mark handled" is seen by the whole operator team; "new": arrived while this page was open.</p>
    <table class="inbox">
      <thead><tr><th>Received</th><th>Tenant</th><th>Visit</th><th>Type</th><th>Message</th><th>Attachment</th><th>Handled</th></tr></thead>
      <tbody>${messages.map((message) => html`<${InboxRow} key=${message.messageId} message=${message} arrived=${arrived.has(message.messageId)} changed=${changed.has(message.messageId)} busy=${busy} mark=${mark} />`)}</tbody>
    </table>`
    }
  </section>`;
}
