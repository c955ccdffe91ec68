// @ts-check
import { api, apiPage, enc } from '../api.js';
import { h, fill, table, when, money } from '../dom.js';

/** Settings → Audit log: the organization's most recent changes (owner/admin), filtered by action, actor and date. */
export async function auditPage(section, s) {
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Audit log'),
    h('p', { class: 'hint' }, 'Every change to the organization, newest first: who did it, what, and to what.'),
  );
  const members = await api(`/v1/orgs/${enc(s.orgId)}/members`).catch(() => []);
  const names = new Map(members.map((m) => [m.user_id, m.user_name]));
  const actor = (a) => {
    const [kind, id] = a.split(':');
    if (kind === 'user') return names.get(id) ?? 'former user';
    return { scim: 'Identity provider (SCIM)', system: 'System', proxy: 'Proxy' }[kind] ?? a;
  };
  const action = h(
    'select',
    { name: 'action', 'aria-label': 'Action' },
    h('option', { value: '' }, 'All actions'),
    ACTION_FAMILIES.map(([value, label]) => h('option', { value }, label)),
  );
  const who = h(
    'select',
    { name: 'actor', 'aria-label': 'Who' },
    h('option', { value: '' }, 'Anyone'),
    h('option', { value: 'scim' }, 'Identity provider (SCIM)'),
    h('option', { value: 'system' }, 'System'),
    members.map((m) => h('option', { value: `user:${m.user_id}` }, m.user_name)),
  );
  const since = h('input', { type: 'date', name: 'since', 'aria-label': 'From date' });
  const until = h('input', { type: 'date', name: 'until', 'aria-label': 'To date (inclusive)' });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
    h('label', {}, 'Action ', action),
    h('label', {}, 'Who ', who),
    h('label', {}, 'From ', since),
    h('label', {}, 'To ', until),
  );
  const card = h('div', { class: 'card', id: 'audit-log' });
  section.append(filters, card);
  /** @type {HTMLElement[]} */
  let rows = [];
  let next = null;
  const more = h('button', { type: 'button', id: 'audit-more', hidden: true, onclick: () => void load(true) }, 'Load more');
  // A page of rows; "Load more" asks for the next page with the same filters (the cursor carries on from the last row shown).
  const load = async (append = false) => {
    const q = new URLSearchParams({ limit: String(AUDIT_PAGE) });
    if (action.value) q.set('action', action.value);
    if (who.value) q.set('actor', who.value);
    // Dates are the viewer's local days; "to" includes its whole day.
    if (since.value) q.set('since', new Date(`${since.value}T00:00:00`).toISOString());
    if (until.value) q.set('until', new Date(new Date(`${until.value}T00:00:00`).getTime() + 86_400_000).toISOString());
    const filtered = q.size > 1;
    if (append && next) q.set('cursor', next);
    else rows = [];
    const page = await apiPage(`/v1/orgs/${enc(s.orgId)}/audit?${q}`);
    rows = rows.concat(
      page.rows.map((r) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, when(r.created_at)),
          h('td', {}, actor(r.actor)),
          h('td', { class: 'mono' }, r.action),
          h('td', {}, targetText(r, names)),
        ),
      ),
    );
    next = page.next;
    more.hidden = !next;
    fill(
      card,
      rows.length
        ? table('Audit log', ['When', 'Who', 'Action', 'Target'], rows)
        : h('p', { class: 'empty' }, filtered ? 'Nothing matches these filters.' : 'Nothing has happened yet.'),
      h('p', { class: 'actions', hidden: !next }, more, h('span', { class: 'hint' }, ` ${rows.length} shown`)),
    );
  };
  for (const input of [action, who, since, until]) input.addEventListener('change', () => void load());
  await load();
}

/** Rows per page of the audit log. */
const AUDIT_PAGE = 50;

/** The action families a filter offers (`key.` matches key.create and key.revoke). */
const ACTION_FAMILIES = [
  ['key.', 'Keys'],
  ['team.', 'Teams'],
  ['member.', 'Members and roles'],
  ['workspace.', 'Workspaces and credits'],
  ['scim.', 'SCIM provisioning'],
  ['sso.', 'Single sign-on'],
  ['session.', 'Sign-ins'],
  ['gateway_session.', 'Claude Code sign-ins'],
  ['org.', 'Organization'],
];

const list = (v) => (Array.isArray(v) && v.length ? v.join(', ') : 'none');

/**
 * What a row touched, in words: the key's name and prefix, the team's name,
 * the amount, the models set. Older rows without names fall back to the kind.
 */
function targetText(r, names) {
  const d = r.detail ?? {};
  const str = (v) => (typeof v === 'string' && v ? v : null);
  const team = str(d.team_name) ? `team “${d.team_name}”` : 'team';
  const user = str(d.user_name) ?? names.get(d.user_id ?? r.target_id) ?? 'a former user';
  switch (r.action) {
    case 'key.create':
    case 'key.revoke':
      return `key “${str(d.name) ?? '?'}” (${str(d.prefix) ?? '?'}…)${str(d.team_name) ? ` in ${team}` : ''}`;
    case 'team.create':
      return `team “${str(d.name) ?? '?'}”`;
    case 'team.member_add':
      return `${user} → ${team}`;
    case 'team.member_remove': {
      const keys =
        Array.isArray(d.revoked_keys) && d.revoked_keys.length
          ? `; revoked ${d.revoked_keys.map((k) => `“${k.name}” (${k.prefix}…)`).join(', ')}`
          : '';
      return `${user} ← ${team}${keys}`;
    }
    case 'team.models_set':
      return `${team}: ${list(d.before)} → ${list(d.after)}`;
    case 'workspace.credit':
      return [`workspace ${str(d.workspace_slug) ?? ''}: +`.replace('  ', ' '), money(d.amount_usd), ' (balance ', money(d.balance_usd), ')'];
    case 'member.role_change':
      return `${user}: ${d.from} → ${d.to}`;
    default:
      return settingsText(r, d, str) ?? claudeCodeText(r, d, str, names) ?? otherText(r, d, str, names);
  }
}

/** Claude Code's /login: a device signing in, a refused refresh (and why), a device signed out, the sign-in settings. */
function claudeCodeText(r, d, str, names) {
  const reasons = {
    refresh_token_reused: 'a refresh token used twice (the device is signed out)',
    expired: 'the sign-in expired',
    membership_inactive: 'the membership is inactive',
    revoked: 'the device was signed out',
    signed_out: 'signed out in Claude Code',
  };
  const reason = reasons[d.reason] ?? str(d.reason) ?? '?';
  switch (r.action) {
    case 'gateway_session.sign_in':
      return `Claude Code device signed in${str(d.client_version) ? ` (${d.client_version})` : ''}`;
    case 'gateway_session.refresh_failure':
      return `Claude Code refresh refused: ${reason}`;
    case 'gateway_session.revoke': {
      const owner = str(d.user_id) ? ` of ${names.get(d.user_id) ?? 'a former user'}` : '';
      return `Claude Code device${owner} signed out${d.reason === 'signed_out' ? ' in Claude Code' : ''}`;
    }
    case 'gateway_signin.settings_update':
      return [
        `Claude Code sign-in: team “${str(d.team_name) ?? '?'}”, `,
        d.budget_usd == null ? 'no budget per device' : [money(d.budget_usd), ' per device'],
      ];
    default:
      return undefined;
  }
}

/** The rows whose target is the organization or a workspace itself: what in it changed, not just "org". */
function settingsText(r, d, str) {
  switch (r.action) {
    case 'org.bootstrap':
      return `organization “${str(d.slug) ?? '?'}”, its first workspace and owner`;
    case 'scim.enable':
    case 'scim.disable':
      return `SCIM provisioning turned ${r.action === 'scim.enable' ? 'on' : 'off'} for the organization`;
    case 'sso.settings_create':
    case 'sso.settings_update':
    case 'sso.settings_delete':
      return `single sign-on${r.action === 'sso.settings_delete' ? ' removed' : ''}: issuer ${str(d.issuer) ?? '?'}, client ${str(d.client_id) ?? '?'}`;
    case 'alerts.balance_threshold':
      return d.balance_below_usd == null ? 'workspace balance alert turned off' : ['workspace balance alert: below ', money(d.balance_below_usd)];
    case 'alerts.webhook_add':
      return `alert webhook ${str(d.url) ?? ''}`.trim();
    case 'alerts.webhook_remove':
      return 'an alert webhook removed';
    default:
      return undefined;
  }
}

function otherText(r, d, str, names) {
  switch (r.target_type) {
    case 'org':
      return 'the organization';
    case 'workspace':
      return `workspace ${str(d.workspace_slug) ?? ''}`.trim();
    default: {
      if (r.target_type === 'user' && names.has(r.target_id)) return names.get(r.target_id);
      const name = str(d.name) ? ` “${d.name}”` : '';
      return `${r.target_type.replace(/_/g, ' ')}${name}`;
    }
  }
}
