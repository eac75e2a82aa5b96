// Deliveries: filters, the list (newest first, refreshed while watching), each one's attempt log, retry
// of one, and retry of every failed delivery matching the filters after a dry-run count.
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, query } from './api.js';
import { useOpenRows, useWatchedList } from './loading.js';
import { Badge, Chosen, ErrorBanner, EVENT_TYPES, html, when } from './ui.js';

const WATCH_MS = 2000;
const FILTERS = ['tenantId', 'status', 'eventType', 'subscriptionId', 'createdFrom', 'createdBefore'];

/** datetime-local (the browser's time zone) to an ISO instant; '' stays ''. */
const instant = (local) => (local ? new Date(local).toISOString() : '');

/** The API's filters from the form: the status only for listing (a bulk retry is always of failed ones). */
function apiFilters(form) {
  return {
    tenantId: form.tenantId.trim(),
    eventType: form.eventType,
    subscriptionId: form.subscriptionId.trim(),
    createdFrom: instant(form.createdFrom),
    createdBefore: instant(form.createdBefore),
  };
}

function compact(filters) {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== ''));
}

function AttemptLog({ delivery }) {
  return html`<tr class="attempts"><td colspan="8">
    <table>
      <thead><tr><th>Attempt</th><th>Started</th><th>Status</th><th>Duration</th><th>Error</th></tr></thead>
      <tbody>
        ${delivery.attemptLog.map(
          (attempt) => html`<tr>
            <td>${attempt.attempt}</td><td>${when(attempt.at)}</td><td>${attempt.statusCode ?? '—'}</td>
            <td>${attempt.durationMs === null ? '—' : `${attempt.durationMs} ms`}</td><td class=${attempt.error ? 'error-text' : ''}><${Chosen} text=${attempt.error} /></td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${delivery.nextAttemptAt && html`<p class="muted">Next attempt due ${when(delivery.nextAttemptAt)}.</p>`}
  </td></tr>`;
}

function BulkRetry({ filters, onRetried }) {
  const [count, setCount] = useState();
  const [done, setDone] = useState();
  const [error, setError] = useState();
  const key = JSON.stringify(filters);
  // A count answers for the filters it was made with: changing them asks for a new one.
  useEffect(() => {
    setCount(undefined);
    setDone(undefined);
  }, [key]);
  const call = async (dryRun) => {
    setError(undefined);
    try {
      const result = await api('POST', '/deliveries/retry-failed', { ...compact(filters), dryRun });
      if (dryRun) setCount({ key, matched: result.matched });
      else {
        setCount(undefined);
        setDone(result.matched);
        onRetried();
      }
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<div class="card bulk" aria-label="Retry failed deliveries">
    <strong>Retry failed deliveries matching these filters</strong>
    <button type="button" onClick=${() => call(true)}>Count failed (dry run)</button>
    ${
      count &&
      html`<span data-testid="dry-run-count">${count.matched} failed ${count.matched === 1 ? 'delivery matches' : 'deliveries match'}.</span>
      <button type="button" class="danger" disabled=${count.matched === 0} onClick=${() => call(false)}>Retry ${count.matched} failed</button>`
    }
    ${done !== undefined && html`<span class="ok">${done} reopened.</span>`}
    <${ErrorBanner} error=${error} />
  </div>`;
}

export function DeliveriesPage({ initial }) {
  const [form, setForm] = useState(() => Object.fromEntries(FILTERS.map((name) => [name, initial[name] || ''])));
  const [applied, setApplied] = useState(form);
  const [watching, setWatching] = useState(true);
  const [open, toggle] = useOpenRows();
  const [actionError, setActionError] = useState();
  const [deliveries, error, load] = useWatchedList(
    () => {
      const params = { ...compact(apiFilters(applied)), status: applied.status, order: 'desc', limit: 200 };
      return api('GET', `/deliveries${query(params)}`);
    },
    JSON.stringify(applied),
    watching,
    WATCH_MS,
  );

  const field = (name) => ({
    name,
    value: form[name],
    onInput: (event) => setForm({ ...form, [name]: event.target.value }),
  });
  const retry = async (id) => {
    setActionError(undefined);
    try {
      await api('POST', `/deliveries/${encodeURIComponent(id)}/retry`);
      await load();
    } catch (failure) {
      setActionError(failure);
    }
  };

  return html`<section>
    <h1>Deliveries</h1>
    <form class="card filters" aria-label="Delivery filters" onSubmit=${(event) => {
      event.preventDefault();
      setApplied(form);
    }}>
      <label>Tenant id <input ...${field('tenantId')} placeholder="tnt_…" /></label>
      <label>Status <select ...${field('status')} onChange=${(event) => setForm({ ...form, status: event.target.value })}>
        <option value="">any</option><option>pending</option><option>succeeded</option><option>failed</option>
      </select></label>
      <label>Event type <select ...${field('eventType')} onChange=${(event) => setForm({ ...form, eventType: event.target.value })}>
        <option value="">any</option>${EVENT_TYPES.map((type) => html`<option>${type}</option>`)}
      </select></label>
      <label>Subscription id <input ...${field('subscriptionId')} placeholder="whsub_…" /></label>
      <label>Queued from <input type="datetime-local" step="1" ...${field('createdFrom')} /></label>
      <label>Queued before <input type="datetime-local" step="1" ...${field('createdBefore')} /></label>
      <button type="submit">Apply filters</button>
      <label class="watch"><input type="checkbox" checked=${watching} onChange=${(event) => setWatching(event.target.checked)} /> Watch (every 2 s)</label>
    </form>
    <${BulkRetry} filters=${apiFilters(applied)} onRetried=${load} />
    <${ErrorBanner} error=${error || actionError} />
    ${deliveries && html`<p class="muted">${deliveries.length} ${deliveries.length === 1 ? 'delivery' : 'deliveries'}, newest first${deliveries.length === 200 ? ' (the latest 200)' : ''}.</p>`}
    <table class="deliveries">
      <thead><tr><th>Queued</th><th>Event</th><th>Status</th><th>Attempts</th><th>Tenant</th><th>Subscription</th><th>Last error</th><th></th></tr></thead>
      <tbody>
        ${(deliveries || []).map(
          (delivery) => html`
          <tr data-delivery=${delivery.deliveryId} data-event-type=${delivery.eventType} data-status=${delivery.status}>
            <td>${when(delivery.createdAt)}</td>
            <td>${delivery.eventType}<div class="muted"><code>${delivery.eventId}</code></div></td>
            <td><${Badge} value=${delivery.status} /></td>
            <td>${delivery.attempts}</td>
            <td><a href=${`#/tenants/${encodeURIComponent(delivery.tenantId)}`}><code>${delivery.tenantId}</code></a></td>
            <td><code>${delivery.subscriptionId}</code></td>
            <td class=${delivery.lastError ? 'error-text' : ''}><${Chosen} text=${delivery.lastError} /></td>
            <td class="actions">
              <button type="button" class="link" onClick=${() => toggle(delivery.deliveryId)}>${open.has(delivery.deliveryId) ? 'Hide attempts' : 'Attempts'}</button>
              ${delivery.status === 'failed' && html`<button type="button" data-action="retry" onClick=${() => retry(delivery.deliveryId)}>Retry</button>`}
            </td>
          </tr>
          ${open.has(delivery.deliveryId) && html`<${AttemptLog} delivery=${delivery} />`}`,
        )}
      </tbody>
    </table>
  </section>`;
}
