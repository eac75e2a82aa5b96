// Site visits (a tenant's latest, or one) and the operator's workflow actions on each, with the client's messages.
import { useState } from './vendor/hooks.mjs';
import { api, apiDocument, download } from './api.js';
import { useAction, useLoaded, useOpenRows } from './loading.js';
import { VisitMessages } from './messages.js';
import { Badge, Chosen, ErrorBanner, html, when } from './ui.js';

/** The statuses in which each workflow action is allowed (the operator API decides; this only greys buttons). */
const ALLOWED_IN = {
  'assign-rep': ['New', 'Scheduled', 'Dispatched'],
  schedule: ['New', 'Scheduled'],
  dispatch: ['Scheduled'],
  complete: ['Dispatched'],
  'transmit-deliverables': ['Dispatched', 'Completed'],
};

/**
 * The most the service takes in a transmission's notes (WORKFLOW_LIMITS.notes, in code points; the browser's
 * maxlength counts UTF-16 units, so text of many emoji is cut a little shorter, never refused).
 */
const NOTES_MAX = 10000;

/** When the visit was completed, and the quality review recorded with it. */
function Completion({ attributes: a }) {
  if (!a.completedAt) return null;
  const review = `quality review ${a.qualityReviewPassed ? 'passed' : 'failed'}`;
  return html`<div class="muted" data-field="completion">completed ${when(a.completedAt)}, ${review}</div>`;
}

/**
 * The last deliverables transmission: when, and the notes the client was sent (text the operator typed, kept in
 * lines as the client receives it), or that it had none.
 */
function LastTransmission({ attributes: a }) {
  if (!a.deliverablesTransmittedAt) return '—';
  return html`<div class="muted">sent ${when(a.deliverablesTransmittedAt)}</div>
    <div data-field="deliverables-notes"><${Chosen} text=${a.deliverablesNotes} lines=${true} empty=${html`<span class="muted">no notes</span>`} /></div>`;
}

/**
 * A visit's row. Complete sends the quality review the operator chose, passed or failed, and Transmit the notes
 * as typed (none when blank): the service decides (a failed review is refused, SPEC: completed after quality
 * review passed) and its problem is shown under the buttons.
 */
function VisitRow({ visit, refresh, messagesOpen, toggleMessages }) {
  const a = visit.attributes;
  const [rep, setRep] = useState(a.fieldRepName || '');
  const [date, setDate] = useState(a.scheduledDate || '');
  const [eta, setEta] = useState(a.etaTime || '');
  const [review, setReview] = useState('');
  const [notes, setNotes] = useState('');
  const { error, busy, run } = useAction(refresh);
  const act = (body) => run(() => api('POST', `/site-visits/${encodeURIComponent(visit.id)}/workflow`, body));
  const allowed = (action) => ALLOWED_IN[action].includes(a.status) && !busy;
  return html`<tr data-visit=${visit.id}>
      <td><code><${Chosen} text=${a.clientTicketNumber} empty=${visit.id} /></code><div class="muted"><${Chosen} text=${a.clientSiteId} empty="" /></div>
        ${a.returnLabel && html`<button type="button" class="link" data-action="return-label" onClick=${() => run(() => download(`/site-visits/${encodeURIComponent(visit.id)}/return-label`, 'return-label.pdf'))}>Return label (v${a.returnLabel.versions.length})</button>`}
        <button type="button" class="link" data-action="messages" aria-expanded=${messagesOpen} onClick=${toggleMessages}>${messagesOpen ? 'Hide messages' : 'Messages'}</button></td>
      <td><${Badge} value=${a.status} /><div class="muted">v${visit.meta.version}</div><${Completion} attributes=${a} /></td>
      <td><${Chosen} text=${a.fieldRepName} /></td>
      <td>${a.scheduledDate ? `${a.scheduledDate} ${a.etaTime || ''}` : '—'}</td>
      <td class="deliverables"><${LastTransmission} attributes=${a} /></td>
      <td class="workflow">
        <span class="step">
          <input aria-label="Field rep" placeholder="Field rep" value=${rep} onInput=${(event) => setRep(event.target.value)} />
          <button type="button" data-action="assign-rep" disabled=${!allowed('assign-rep') || rep.trim() === ''} onClick=${() => act({ action: 'assign-rep', fieldRepName: rep.trim() })}>Assign rep</button>
        </span>
        <span class="step">
          <input aria-label="Scheduled date" type="date" value=${date} onInput=${(event) => setDate(event.target.value)} />
          <input aria-label="ETA" type="time" value=${eta} onInput=${(event) => setEta(event.target.value)} />
          <button type="button" data-action="schedule" disabled=${!allowed('schedule') || date === ''} onClick=${() => act({ action: 'schedule', scheduledDate: date, etaTime: eta || null })}>Schedule</button>
        </span>
        <button type="button" data-action="dispatch" disabled=${!allowed('dispatch')} onClick=${() => act({ action: 'dispatch' })}>Dispatch</button>
        <span class="step">
          <select aria-label="Quality review" value=${review} onChange=${(event) => setReview(event.target.value)}>
            <option value="">Quality review…</option><option value="passed">passed</option><option value="failed">failed</option>
          </select>
          <button type="button" data-action="complete" disabled=${!allowed('complete') || review === ''} onClick=${() => act({ action: 'complete', qualityReviewPassed: review === 'passed' })}>Complete</button>
        </span>
        <span class="step">
          <textarea aria-label="Deliverables notes" placeholder="Notes (optional)" rows="1" maxlength=${NOTES_MAX} value=${notes} onInput=${(event) => setNotes(event.target.value)}></textarea>
          <button type="button" data-action="transmit-deliverables" disabled=${!allowed('transmit-deliverables')} onClick=${() => act({ action: 'transmit-deliverables', notes: notes.trim() === '' ? null : notes })}>Transmit deliverables</button>
        </span>
        <${ErrorBanner} error=${error} />
      </td>
    </tr>`;
}

/** The columns of a visit's row, which the row of its messages spans. */
const COLUMNS = 6;

/** Visits, each with its messages below it when open (kept by the table: a row is drawn anew at each version). */
function VisitsTable({ visits, refresh, initiallyOpen }) {
  const [open, toggle] = useOpenRows(initiallyOpen);
  return html`<table>
    <thead><tr><th>Ticket</th><th>Status</th><th>Field rep</th><th>Scheduled</th><th>Deliverables</th><th>Workflow</th></tr></thead>
    <tbody>${visits.map(
      (
        visit,
      ) => html`<${VisitRow} key=${`${visit.id}:${visit.meta.version}`} visit=${visit} refresh=${refresh} messagesOpen=${open.has(visit.id)} toggleMessages=${() => toggle(visit.id)} />
        ${open.has(visit.id) && html`<${VisitMessages} key=${`messages:${visit.id}`} visitId=${visit.id} columns=${COLUMNS} />`}`,
    )}</tbody>
  </table>`;
}

export function Visits({ tenantId }) {
  const path = `/tenants/${encodeURIComponent(tenantId)}/site-visits`;
  const [latest, error, refresh] = useLoaded(() => apiDocument('GET', path), [path]);
  const visits = latest?.data;
  // The answer stops at 1 MiB: the visits it left out are older than those shown.
  const omitted = latest?.meta?.omitted;
  return html`<section class="card" aria-label="Site visits">
    <h2>Site visits <button type="button" class="link" onClick=${refresh}>Refresh</button></h2>
    <${ErrorBanner} error=${error} />
    ${visits && visits.length === 0 && html`<p class="muted">No visits yet: the client creates them (POST /api/v1/site-visits).</p>`}
    ${visits && visits.length > 0 && html`<${VisitsTable} visits=${visits} refresh=${refresh} />`}
    ${omitted > 0 && html`<p class="muted" data-field="visits-omitted">${omitted} older ${omitted === 1 ? 'visit is' : 'visits are'} not shown: the list stops at 1 MiB of visits.</p>`}
  </section>`;
}

/** One visit, whichever tenant's, with its messages open: where the inbox's messages lead. */
export function VisitPage({ visitId }) {
  const [visit, error, refresh] = useLoaded(() => api('GET', `/site-visits/${encodeURIComponent(visitId)}`), [visitId]);
  if (!visit) return html`<section><p><a href="#/messages">Messages</a></p><${ErrorBanner} error=${error} /></section>`;
  const tenantId = visit.attributes.clientId;
  return html`<section>
    <p><a href="#/messages">Messages</a> › <a href=${`#/tenants/${encodeURIComponent(tenantId)}`}><code>${tenantId}</code></a></p>
    <h1>Site visit <code><${Chosen} text=${visit.attributes.clientTicketNumber} empty=${visit.id} /></code></h1>
    <section class="card" aria-label="Site visit">
      <${ErrorBanner} error=${error} />
      <${VisitsTable} visits=${[visit]} refresh=${refresh} initiallyOpen=${[visit.id]} />
    </section>
  </section>`;
}
