// The operator console: sign-in, navigation (the URL's hash), and the pages.
import { render } from './vendor/preact.mjs';
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, signIn, signOut, whenUnauthorized } from './api.js';
import { DeliveriesPage } from './deliveries.js';
import { InboxPage } from './inbox.js';
import { TenantPage, TenantsPage } from './tenants.js';
import { ErrorBanner, html } from './ui.js';
import { MessagesLink } from './unread.js';
import { VisitPage } from './visits.js';

/**
 * The current route from location.hash: #/tenants, #/tenants/<id>, #/messages?tenantId=<id>&show=<all|handled>,
 * #/visits/<id>, #/deliveries?<filters>.
 */
function readRoute() {
  const [path, search = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean);
  return {
    page: parts[0] || 'tenants',
    id: parts[1] ? decodeURIComponent(parts[1]) : undefined,
    params: Object.fromEntries(new URLSearchParams(search)),
  };
}

function SignIn({ onSignedIn }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    signIn(value.trim());
    try {
      await api('GET', '/tenants');
      onSignedIn();
    } catch (failure) {
      signOut();
      setError(
        failure.status === 401 ? { title: 'Not signed in', detail: 'That is not the operator token.' } : failure,
      );
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="sign-in">
    <h1>Site Services <span class="muted">operator console</span></h1>
    <form onSubmit=${submit}>
      <label for="token">Operator token (ADMIN_TOKEN)</label>
      <input id="token" name="token" type="password" autocomplete="off" required value=${value} onInput=${(event) => setValue(event.target.value)} />
      <button type="submit" disabled=${busy}>Sign in</button>
      <p class="muted">The token stays in this page's memory only: reloading signs you out.</p>
    </form>
    <${ErrorBanner} error=${error} />
  </main>`;
}

function App() {
  const [signed, setSigned] = useState(false);
  const [route, setRoute] = useState(readRoute());
  useEffect(() => {
    const onHash = () => setRoute(readRoute());
    addEventListener('hashchange', onHash);
    const stop = whenUnauthorized(() => {
      signOut();
      setSigned(false);
    });
    return () => {
      removeEventListener('hashchange', onHash);
      stop();
    };
  }, []);
  if (!signed) return html`<${SignIn} onSignedIn=${() => setSigned(true)} />`;

  const current = (page) => (route.page === page ? 'page' : undefined);
  let content;
  if (route.page === 'tenants' && route.id) content = html`<${TenantPage} key=${route.id} tenantId=${route.id} />`;
  else if (route.page === 'visits' && route.id) content = html`<${VisitPage} key=${route.id} visitId=${route.id} />`;
  // Not keyed by the filter: choosing another keeps the page and its Watch.
  else if (route.page === 'messages')
    content = html`<${InboxPage} tenantId=${route.params.tenantId || undefined} show=${route.params.show || undefined} />`;
  else if (route.page === 'deliveries')
    content = html`<${DeliveriesPage} key=${JSON.stringify(route.params)} initial=${route.params} />`;
  else content = html`<${TenantsPage} />`;
  return html`<div class="shell">
    <header>
      <strong>Site Services</strong>
      <nav>
        <a href="#/tenants" aria-current=${current('tenants')}>Tenants</a>
        <${MessagesLink} current=${current('messages')} />
        <a href="#/deliveries" aria-current=${current('deliveries')}>Deliveries</a>
      </nav>
      <button type="button" class="link" onClick=${() => {
        signOut();
        setSigned(false);
      }}>Sign out</button>
    </header>
    <main>${content}</main>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
