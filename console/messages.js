// The messages a client sent about a visit (its notes, and the files attached to them), opened from the visit's row.
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, download, query } from './api.js';
import { useAction, useLoaded } from './loading.js';
import { Chosen, ErrorBanner, html, when } from './ui.js';

/** Messages read a page at a time (the operator API's most); "More messages" reads the next. */
const PAGE = 100;

/** What the client said of itself on the message: the two flags it may set, when set. */
function flags(attributes) {
  const set = [attributes.buyer && 'buyer', attributes.clientContacts && 'client contacts'].filter(Boolean);
  return set.length === 0 ? null : html`<div class="muted">${set.join(', ')}</div>`;
}

function MessageRow({ message, run, busy }) {
  const a = message.attributes;
  const file = a.fileAttachment;
  const latest = file?.versions[file.versions.length - 1];
  const save = () => run(() => download(`/messages/${encodeURIComponent(message.id)}/file-attachment`, 'attachment'));
  return html`<tr data-message=${message.id}>
    <td class="sent">${when(a.createdAt)}${a.updatedAt !== a.createdAt && html`<div class="muted">changed ${when(a.updatedAt)}</div>`}</td>
    <td>${a.type ?? '—'}${flags(a)}</td>
    <td>${a.status}</td>
    <td>${a.urgency ?? '—'}</td>
    <td class="message-text"><${Chosen} text=${a.messageThread} lines=${true} /></td>
    <td>${
      latest
        ? html`<button type="button" data-action="attachment" disabled=${busy} onClick=${save}>Download (v${file.versions.length})</button>
          <div class="muted"><${Chosen} text=${latest.fileName} /></div>`
        : '—'
    }</td>
  </tr>`;
}

/** The visit's messages, oldest first (as the client lists them), in a row below the visit's. */
export function VisitMessages({ visitId, columns }) {
  const path = `/site-visits/${encodeURIComponent(visitId)}/messages`;
  const [first, error, refresh] = useLoaded(() => api('GET', `${path}${query({ limit: PAGE })}`), [path]);
  // The pages after the first, read with "More messages"; a refresh starts from the first again.
  const [later, setLater] = useState([]);
  useEffect(() => setLater([]), [first]);
  const { error: actionError, busy, run } = useAction();
  const messages = first && [...first, ...later.flat()];
  const last = later.length > 0 ? later[later.length - 1] : first;
  const more = () =>
    run(async () => {
      const after = messages[messages.length - 1].id;
      const page = await api('GET', `${path}${query({ limit: PAGE, after })}`);
      setLater([...later, page]);
    });
  return html`<tr class="messages" data-messages-of=${visitId}><td colspan=${columns}>
    <strong>Messages from the client</strong> <button type="button" class="link" onClick=${refresh}>Refresh messages</button>
    <${ErrorBanner} error=${error || actionError} />
    ${messages && messages.length === 0 && html`<p class="muted">No messages on this visit.</p>`}
    ${
      messages &&
      messages.length > 0 &&
      html`<table>
      <thead><tr><th>Sent</th><th>Type</th><th>Status</th><th>Urgency</th><th>Message</th><th>Attachment</th></tr></thead>
      <tbody>${messages.map((message) => html`<${MessageRow} key=${message.id} message=${message} run=${run} busy=${busy} />`)}</tbody>
    </table>`
    }
    ${last && last.length === PAGE && html`<button type="button" class="link" data-action="more-messages" disabled=${busy} onClick=${more}>More messages</button>`}
  </td></tr>`;
}
