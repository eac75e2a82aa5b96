// Tenants: the list and create form; one tenant's settings, credentials, visits and subscriptions.
import { useState } from './vendor/hooks.mjs';
import { api, query } from './api.js';
import { useAction, useLoaded } from './loading.js';
import { sizeText } from './sizes.js';
import { Chosen, ErrorBanner, html, percent, SCOPES, SecretOnce, when } from './ui.js';
import { Visits } from './visits.js';

function ScopeBoxes({ selected, onChange, name }) {
  const toggle = (scope) =>
    onChange(
      selected.includes(scope)
        ? selected.filter((each) => each !== scope)
        : SCOPES.filter((each) => each === scope || selected.includes(each)),
    );
  return html`<fieldset class="scopes"><legend>Scopes</legend>
    ${SCOPES.map((scope) => html`<label><input type="checkbox" name=${`${name}-${scope}`} checked=${selected.includes(scope)} onChange=${() => toggle(scope)} /> ${scope}</label>`)}
  </fieldset>`;
}

export function TenantsPage() {
  const [tenants, loadError, refresh] = useLoaded(() => api('GET', '/tenants'), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState(SCOPES);
  const [apiEnabled, setApiEnabled] = useState(true);
  const [webhookAccess, setWebhookAccess] = useState(true);
  const [created, setCreated] = useState();
  const { error, busy, run } = useAction(refresh);

  const create = async (event) => {
    event.preventDefault();
    const tenant = await run(() => api('POST', '/tenants', { name: name.trim(), scopes, apiEnabled, webhookAccess }));
    if (tenant) {
      setCreated(tenant);
      setName('');
    }
  };
  return html`<section>
    <h1>Tenants</h1>
    <form class="card" onSubmit=${create} aria-label="Create a tenant">
      <h2>Create a tenant</h2>
      <label>Name <input name="name" required maxlength="200" value=${name} onInput=${(event) => setName(event.target.value)} /></label>
      <${ScopeBoxes} name="create" selected=${scopes} onChange=${setScopes} />
      <label><input type="checkbox" name="apiEnabled" checked=${apiEnabled} onChange=${(event) => setApiEnabled(event.target.checked)} /> apiEnabled</label>
      <label><input type="checkbox" name="webhookAccess" checked=${webhookAccess} onChange=${(event) => setWebhookAccess(event.target.checked)} /> webhookAccess</label>
      <button type="submit" disabled=${busy}>Create tenant</button>
    </form>
    <${ErrorBanner} error=${error || loadError} />
    ${
      created &&
      html`<div>
      <p>Created <a href=${`#/tenants/${encodeURIComponent(created.id)}`}>${created.name}</a> (<code>${created.id}</code>).</p>
      <${SecretOnce} pair=${created.credentials} onDone=${() => setCreated(undefined)} />
    </div>`
    }
    <table>
      <thead><tr><th>Name</th><th>Tenant id</th><th>apiEnabled</th><th>webhookAccess</th><th>Scopes</th><th>Created</th></tr></thead>
      <tbody>
        ${(tenants || []).map(
          (tenant) => html`<tr>
            <td><a href=${`#/tenants/${encodeURIComponent(tenant.id)}`}>${tenant.name}</a></td>
            <td><code>${tenant.id}</code></td>
            <td>${tenant.apiEnabled ? 'on' : 'off'}</td>
            <td>${tenant.webhookAccess ? 'on' : 'off'}</td>
            <td>${tenant.scopes.length === SCOPES.length ? 'all' : tenant.scopes.join(', ') || 'none'}</td>
            <td>${when(tenant.createdAt)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function TenantSettings({ tenant, refresh }) {
  const [scopes, setScopes] = useState(tenant.scopes);
  const [apiEnabled, setApiEnabled] = useState(tenant.apiEnabled);
  const [webhookAccess, setWebhookAccess] = useState(tenant.webhookAccess);
  const [maxActiveSubscriptions, setMaxActiveSubscriptions] = useState(String(tenant.maxActiveSubscriptions));
  const [storageLimitMiB, setStorageLimitMiB] = useState(String(tenant.storageLimitMiB));
  const { error, busy, run } = useAction(refresh);
  const [saved, setSaved] = useState(false);
  const save = async (event) => {
    event.preventDefault();
    setSaved(false);
    if (
      await run(() =>
        api('PATCH', `/tenants/${encodeURIComponent(tenant.id)}`, {
          scopes,
          apiEnabled,
          webhookAccess,
          maxActiveSubscriptions: Number(maxActiveSubscriptions),
          storageLimitMiB: Number(storageLimitMiB),
        }),
      )
    )
      setSaved(true);
  };
  return html`<form class="card" onSubmit=${save} aria-label="Tenant settings">
    <h2>Settings</h2>
    <${ScopeBoxes} name="settings" selected=${scopes} onChange=${setScopes} />
    <label><input type="checkbox" name="apiEnabled" checked=${apiEnabled} onChange=${(event) => setApiEnabled(event.target.checked)} /> apiEnabled <span class="muted">(lifecycle events are published only with both flags on)</span></label>
    <label><input type="checkbox" name="webhookAccess" checked=${webhookAccess} onChange=${(event) => setWebhookAccess(event.target.checked)} /> webhookAccess</label>
    <label>maxActiveSubscriptions <input type="number" name="maxActiveSubscriptions" min="1" max="1000" step="1" required value=${maxActiveSubscriptions} onInput=${(event) => setMaxActiveSubscriptions(event.target.value)} /> <span class="muted">(a lower limit removes nothing; the tenant adds none until below it)</span></label>
    <label>storageLimitMiB <input type="number" name="storageLimitMiB" min="10" max="10485760" step="1" required value=${storageLimitMiB} onInput=${(event) => setStorageLimitMiB(event.target.value)} /> <span class="muted">(every version of every uploaded file, in MiB; ${sizeText(tenant.storageUsedBytes)} used; a lower limit removes nothing, the tenant uploads none until below it)</span></label>
    <button type="submit" disabled=${busy}>Save settings</button> ${saved && html`<span class="ok">Saved.</span>`}
    <${ErrorBanner} error=${error} />
  </form>`;
}

function Credentials({ tenantId }) {
  const path = `/tenants/${encodeURIComponent(tenantId)}/credentials`;
  const [credentials, loadError, refresh] = useLoaded(() => api('GET', path), [path]);
  const [issued, setIssued] = useState();
  const [confirming, setConfirming] = useState();
  const { error, busy, run } = useAction(refresh);
  return html`<section class="card" aria-label="Credentials">
    <h2>Credential pairs</h2>
    ${issued && html`<${SecretOnce} pair=${issued} onDone=${() => setIssued(undefined)} />`}
    <table>
      <thead><tr><th>client_id</th><th>Created</th><th>Revoked</th><th></th></tr></thead>
      <tbody>
        ${(credentials || []).map(
          (pair) => html`<tr>
            <td><code>${pair.client_id}</code></td>
            <td>${when(pair.createdAt)}</td>
            <td>${when(pair.revokedAt)}</td>
            <td>${
              !pair.revokedAt &&
              (confirming === pair.client_id
                ? html`<button type="button" class="danger" disabled=${busy} onClick=${() => run(() => api('DELETE', `${path}/${encodeURIComponent(pair.client_id)}`)).then(() => setConfirming(undefined))}>Confirm revoke</button>`
                : html`<button type="button" onClick=${() => setConfirming(pair.client_id)}>Revoke</button>`)
            }</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <button type="button" disabled=${busy} onClick=${async () => setIssued(await run(() => api('POST', path)))}>Add a credential pair</button>
    <${ErrorBanner} error=${error || loadError} />
  </section>`;
}

/**
 * A subscription's last error, with when it happened: it is kept after the subscription succeeds again, and shown
 * alone beside a success rate of 100% it read as a failure under way. Red while the subscription is failing;
 * greyed, and said to be before the last success, once it has succeeded since (kept: it says what went wrong).
 */
function LastError({ health }) {
  if (!health.lastError) return html`<td>—</td>`;
  const failing = health.consecutiveFailures > 0;
  return html`<td class=${failing ? 'error-text' : 'error-text recovered'} data-last-error=${failing ? 'failing' : 'recovered'}>
    <${Chosen} text=${health.lastError} />
    <div class="muted">${when(health.lastFailureAt)}${failing ? '' : ', before the last success'}</div>
  </td>`;
}

function Subscriptions({ tenantId }) {
  const path = `/tenants/${encodeURIComponent(tenantId)}/webhook-subscriptions`;
  const [subscriptions, error, refresh] = useLoaded(() => api('GET', path), [path]);
  return html`<section class="card" aria-label="Webhook subscriptions">
    <h2>Webhook subscriptions <button type="button" class="link" onClick=${refresh}>Refresh</button></h2>
    <${ErrorBanner} error=${error} />
    ${subscriptions && subscriptions.length === 0 && html`<p class="muted">No subscriptions.</p>`}
    ${
      subscriptions &&
      subscriptions.length > 0 &&
      html`<table>
      <thead><tr><th>Target</th><th>Active</th><th>Success (24 h)</th><th>Last success</th><th>Failing</th><th>Last error</th><th></th></tr></thead>
      <tbody>
        ${subscriptions.map((subscription) => {
          const health = subscription.health;
          const recent = health.last24Hours;
          return html`<tr data-subscription=${subscription.id}>
            <td><code><${Chosen} text=${subscription.targetUrl} /></code><div class="muted">${subscription.signingVersion} · ${subscription.eventTypes.length} event types</div></td>
            <td>${subscription.isActive ? 'yes' : html`no${health.deactivatedReason && html`<div class="muted">${health.deactivatedReason}</div>`}`}</td>
            <td>${percent(recent.successRate)}<div class="muted">${recent.succeeded} ok · ${recent.failed} failed · ${recent.pending} pending</div></td>
            <td>${when(health.lastSuccessAt)}</td>
            <td>${health.consecutiveFailures > 0 ? html`${health.consecutiveFailures} in a row<div class="muted">since ${when(health.failingSince)}</div>` : '—'}</td>
            <${LastError} health=${health} />
            <td><a href=${`#/deliveries${query({ subscriptionId: subscription.id })}`}>Deliveries</a></td>
          </tr>`;
        })}
      </tbody>
    </table>`
    }
  </section>`;
}

export function TenantPage({ tenantId }) {
  const [tenant, error, refresh] = useLoaded(() => api('GET', `/tenants/${encodeURIComponent(tenantId)}`), [tenantId]);
  if (!tenant) return html`<section><p><a href="#/tenants">Tenants</a></p><${ErrorBanner} error=${error} /></section>`;
  return html`<section>
    <p><a href="#/tenants">Tenants</a> › ${tenant.name}</p>
    <h1>${tenant.name} <code class="muted">${tenant.id}</code></h1>
    <p><a href=${`#/messages${query({ tenantId })}`}>This tenant's messages</a> · <a href=${`#/deliveries${query({ tenantId })}`}>This tenant's deliveries</a></p>
    <div class="columns">
      <${TenantSettings} key=${tenant.updatedAt} tenant=${tenant} refresh=${refresh} />
      <${Credentials} tenantId=${tenantId} />
    </div>
    <${Visits} tenantId=${tenantId} />
    <${Subscriptions} tenantId=${tenantId} />
  </section>`;
}
