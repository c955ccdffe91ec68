import { api, enc } from '../api.js';
import { h, fill, table, when, usd } from '../dom.js';

/** Settings → Audit log: the organization's most recent changes (owner/admin). */
export async function auditPage(section, s) {
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Audit log'),
    h('p', { class: 'hint' }, 'Every change to the organization, newest first: who did it, what, and to what.'),
  );
  const card = h('div', { class: 'card' });
  section.append(card);
  const [rows, members] = await Promise.all([
    api(`/v1/orgs/${enc(s.orgId)}/audit?limit=200`),
    api(`/v1/orgs/${enc(s.orgId)}/members`).catch(() => []),
  ]);
  const names = new Map(members.map((m) => [m.user_id, m.user_name]));
  const actor = (a) => {
    const [kind, id] = a.split(':');
    if (kind === 'user') return names.get(id) ?? 'former user';
    return { scim: 'Identity provider (SCIM)', system: 'System', proxy: 'Proxy' }[kind] ?? a;
  };
  const target = (r) => targetText(r, names);
  fill(
    card,
    rows.length
      ? table(
          'Audit log',
          ['When', 'Who', 'Action', 'Target'],
          rows.map((r) =>
            h(
              'tr',
              {},
              h('td', { class: 'num' }, when(r.created_at)),
              h('td', {}, actor(r.actor)),
              h('td', { class: 'mono' }, r.action),
              h('td', {}, target(r)),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'Nothing has happened yet.'),
  );
}

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
      return `workspace ${str(d.workspace_slug) ?? ''}: +${usd(d.amount_usd)} (balance ${usd(d.balance_usd)})`.replace('  ', ' ');
    case 'member.role_change':
      return `${user}: ${d.from} → ${d.to}`;
    default: {
      if (r.target_type === 'user' && names.has(r.target_id)) return names.get(r.target_id);
      const name = str(d.name) ? ` “${d.name}”` : '';
      return `${r.target_type.replace(/_/g, ' ')}${name}`;
    }
  }
}
