import { api, enc } from '../api.js';
import { h, fill, table, when } from '../dom.js';

/** Settings → Audit log: the organization's most recent changes (owner/admin). */
export async function auditPage(section, s) {
  fill(section, h('h1', { tabindex: '-1' }, 'Audit log'), h('p', { class: 'hint' }, 'Every change to the organization, newest first: who did it, what, and to what.'));
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
  const target = (r) => {
    if (r.target_type === 'user' && names.has(r.target_id)) return names.get(r.target_id);
    const name = r.detail && typeof r.detail.name === 'string' ? ` “${r.detail.name}”` : '';
    return `${r.target_type.replace(/_/g, ' ')}${name}`;
  };
  fill(
    card,
    rows.length
      ? table(
          'Audit log',
          ['When', 'Who', 'Action', 'Target'],
          rows.map((r) =>
            h('tr', {}, h('td', { class: 'num' }, when(r.created_at)), h('td', {}, actor(r.actor)), h('td', { class: 'mono' }, r.action), h('td', {}, target(r))),
          ),
        )
      : h('p', { class: 'empty' }, 'Nothing has happened yet.'),
  );
}
