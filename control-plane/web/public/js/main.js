// @ts-check
import { api, onUnauthorized } from './api.js';
import { h, fill, badge } from './dom.js';
import { signInPage } from './pages/signin.js';
import { overviewPage } from './pages/overview.js';
import { teamsPage, teamPage } from './pages/teams.js';
import { keysPage } from './pages/keys.js';
import { membersPage } from './pages/members.js';
import { devicesPage } from './pages/devices.js';
import { scimPage } from './pages/scim.js';
import { ssoPage } from './pages/sso.js';
import { auditPage } from './pages/audit.js';
import { usagePage } from './pages/usage.js';
import { refusalsPage } from './pages/refusals.js';
import { alertsPage } from './pages/alerts.js';
import { modelsPage } from './pages/models.js';
import { keySettingsPage } from './pages/key-settings.js';

/**
 * @typedef {{ path: RegExp, nav: string, title: string, page: (section: HTMLElement, s: any, ctx: any) => unknown, admin?: boolean }} Route
 */
/** @type {Route[]} */
const ROUTES = [
  { path: /^\/$|^\/overview$/, nav: 'overview', title: 'Workspace', page: overviewPage },
  { path: /^\/teams$/, nav: 'teams', title: 'Teams', page: teamsPage },
  { path: /^\/teams\/([\w-]+)$/, nav: 'teams', title: 'Team', page: teamPage },
  { path: /^\/keys$/, nav: 'keys', title: 'API keys', page: keysPage },
  { path: /^\/usage$/, nav: 'usage', title: 'Usage', page: usagePage },
  { path: /^\/refusals$/, nav: 'refusals', title: 'Refusals', page: refusalsPage },
  { path: /^\/models$/, nav: 'models', title: 'Models', page: modelsPage },
  { path: /^\/settings\/members$/, nav: 'members', title: 'Members', page: membersPage },
  { path: /^\/settings\/members\/([\w-]+)\/devices$/, nav: 'members', title: 'Devices', page: devicesPage },
  { path: /^\/settings\/scim$/, nav: 'scim', title: 'SCIM provisioning', page: scimPage, admin: true },
  { path: /^\/settings\/sso$/, nav: 'sso', title: 'Single sign-on', page: ssoPage, admin: true },
  { path: /^\/settings\/audit$/, nav: 'audit', title: 'Audit log', page: auditPage, admin: true },
  { path: /^\/settings\/alerts$/, nav: 'alerts', title: 'Money alerts', page: alertsPage, admin: true },
  { path: /^\/settings\/keys$/, nav: 'key-settings', title: 'Key settings', page: keySettingsPage, admin: true },
];

const NAV = [
  { id: 'overview', href: '#/overview', label: 'Workspace' },
  { id: 'teams', href: '#/teams', label: 'Teams' },
  { id: 'keys', href: '#/keys', label: 'API keys' },
  { id: 'usage', href: '#/usage', label: 'Usage' },
  { id: 'refusals', href: '#/refusals', label: 'Refusals' },
  { id: 'models', href: '#/models', label: 'Models' },
  { heading: 'Settings' },
  { id: 'members', href: '#/settings/members', label: 'Members' },
  { id: 'scim', href: '#/settings/scim', label: 'SCIM', admin: true },
  { id: 'sso', href: '#/settings/sso', label: 'SSO', admin: true },
  { id: 'audit', href: '#/settings/audit', label: 'Audit log', admin: true },
  { id: 'alerts', href: '#/settings/alerts', label: 'Alerts', admin: true },
  { id: 'key-settings', href: '#/settings/keys', label: 'Keys', admin: true },
];

const WORKSPACE_KEY = 'tollgate.workspace';
const app = document.getElementById('app');
/** Who is signed in and where; rebuilt on every sign-in. */
let session = null;

function parseHash() {
  const raw = location.hash.startsWith('#/') ? location.hash.slice(1) : '/';
  const [path, query = ''] = raw.split('?');
  return { path, params: new URLSearchParams(query) };
}

export function navigate(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

/** Shows the sign-in page, optionally with why the user is there. */
function showSignIn(message) {
  session = null;
  document.title = 'Sign in · Tollgate';
  fill(app, signInPage({ message, onSignedIn: start }));
}

async function loadSession() {
  const me = await api('/v1/me', { quiet: true });
  const membership = me.memberships[0];
  if (!membership) throw new Error('This account has no organization membership.');
  const isAdmin = membership.role === 'owner' || membership.role === 'admin';
  let workspaces = [];
  let workspaceError = null;
  try {
    workspaces = await api(`/v1/orgs/${encodeURIComponent(membership.org_id)}/workspaces`);
  } catch (err) {
    workspaceError = err.message;
  }
  const saved = sessionStorage.getItem(WORKSPACE_KEY);
  const workspace = workspaces.find((w) => w.id === saved) ?? workspaces[0] ?? null;
  return { me, orgId: membership.org_id, role: membership.role, isAdmin, workspaces, workspace, workspaceError };
}

async function start() {
  try {
    session = await loadSession();
  } catch (err) {
    // "No session yet" is the normal first visit; anything else (expired,
    // deprovisioned) is worth telling the user.
    const message = err.status === 401 && /required/i.test(err.message) ? null : err.message;
    showSignIn(message);
    return;
  }
  if (!location.hash.startsWith('#/') || location.hash === '#/signin') history.replaceState(null, '', '#/overview');
  render();
}

function shell(active) {
  const s = session;
  const workspacePicker =
    s.workspaces.length > 1
      ? h(
          'label',
          { class: 'ws-picker' },
          h('span', { class: 'visually-hidden' }, 'Workspace'),
          h(
            'select',
            {
              onchange: (e) => {
                s.workspace = s.workspaces.find((w) => w.id === e.target.value) ?? s.workspace;
                sessionStorage.setItem(WORKSPACE_KEY, s.workspace.id);
                render();
              },
            },
            s.workspaces.map((w) => h('option', { value: w.id, selected: w.id === s.workspace?.id }, w.slug)),
          ),
        )
      : s.workspace
        ? h('span', { class: 'ws-name' }, s.workspace.slug)
        : null;
  const signOut = h('button', { type: 'button', class: 'ghost', onclick: () => signOutNow() }, 'Sign out');
  const signOutAll = h(
    'button',
    { type: 'button', class: 'ghost', title: 'End every session and console token you hold in this organization', onclick: () => signOutNow(true) },
    'Sign out everywhere',
  );
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h(
      'ul',
      {},
      NAV.filter((n) => !n.admin || s.isAdmin).map((n) =>
        n.heading
          ? h('li', { class: 'nav-heading', 'aria-hidden': 'true' }, n.heading)
          : h('li', {}, h('a', { href: n.href, 'aria-current': n.id === active ? 'page' : false }, n.heading ? '' : n.label)),
      ),
    ),
  );
  const main = h('main', { id: 'main', tabindex: '-1' });
  const skip = h('a', { class: 'skip', href: '#main', onclick: (e) => (e.preventDefault(), main.focus()) }, 'Skip to content');
  fill(
    app,
    skip,
    h(
      'header',
      { class: 'topbar' },
      h('a', { class: 'brand', href: '#/overview' }, h('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }), 'Tollgate'),
      workspacePicker,
      h(
        'div',
        { class: 'who' },
        h('span', { class: 'email' }, s.me.email ?? s.me.user_id),
        badge(s.role, s.isAdmin ? 'accent' : ''),
        signOut,
        signOutAll,
      ),
    ),
    h('div', { class: 'layout' }, nav, main),
  );
  return main;
}

async function signOutNow(everywhere = false) {
  try {
    await api(everywhere ? '/v1/auth/logout-all' : '/v1/auth/logout', { method: 'POST', quiet: true });
  } catch {
    // Already gone server-side: signing out locally is all that is left.
  }
  history.replaceState(null, '', '#/signin');
  showSignIn(everywhere ? 'You have signed out everywhere: every session and console token you held has ended.' : 'You have signed out.');
}

function render() {
  if (!session) return;
  const { path, params } = parseHash();
  if (path === '/signin') {
    history.replaceState(null, '', '#/overview');
    return render();
  }
  const route = ROUTES.find((r) => r.path.test(path));
  const main = shell(route?.nav);
  const section = h('section', { class: 'page' });
  main.append(section);
  if (!route) {
    document.title = 'Not found · Tollgate';
    fill(section, h('h1', { tabindex: '-1' }, 'Page not found'), h('p', {}, h('a', { href: '#/overview' }, 'Back to the workspace')));
  } else if (route.admin && !session.isAdmin) {
    document.title = `${route.title} · Tollgate`;
    fill(section, h('h1', { tabindex: '-1' }, route.title), h('p', { class: 'notice' }, 'Only organization owners and admins can see this page.'));
  } else {
    document.title = `${route.title} · Tollgate`;
    const match = route.path.exec(path);
    Promise.resolve(route.page(section, session, { params, match, navigate }))
      .catch((err) => {
        section.append(h('p', { class: 'error', role: 'alert' }, err.message));
      })
      .then(() => focusHeading(section));
  }
  requestAnimationFrame(() => focusHeading(section));
}

/** Moves focus to the new page's heading, so keyboard and screen-reader users land on it, unless they already moved on. */
function focusHeading(section) {
  const active = document.activeElement;
  if (!section.isConnected || (active && active !== document.body && !active.matches('main, nav a'))) return;
  section.querySelector('h1')?.focus({ preventScroll: true });
}

onUnauthorized((detail) => {
  history.replaceState(null, '', '#/signin');
  // The session was refused mid-use: expired, signed out elsewhere, or the
  // identity provider deprovisioned this user.
  showSignIn([
    'Your session has ended. Sign in again to continue; if your organization removed your access, ask one of its admins.',
    `The server said: ${detail}`,
  ]);
});
window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#/')) render();
});
start();
