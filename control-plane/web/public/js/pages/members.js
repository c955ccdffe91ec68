// @ts-check
import { api, enc } from '../api.js';
import { h, fill, errorBox, toast, table, badge, confirmDialog } from '../dom.js';

const ROLES = ['owner', 'admin', 'member'];
const SOURCES = { scim: 'SCIM', sso: 'SSO', bootstrap: 'Bootstrap' };

function displayName(m) {
  if (typeof m.name === 'string' && m.name) return m.name;
  if (m.display_name) return m.display_name;
  const parts = [m.given_name ?? m.name?.givenName, m.family_name ?? m.name?.familyName].filter(Boolean);
  return parts.length ? parts.join(' ') : '—';
}

/** Settings → Members: everyone in the organization; admins change roles here (roles never come from the IdP). */
export async function membersPage(section, s) {
  const error = errorBox();
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Members'),
    h(
      'p',
      { class: 'hint' },
      'People join through SCIM provisioning or their first SSO sign-in, with the member role. ',
      s.isAdmin ? 'Change roles here; the identity provider never changes them.' : 'Only owners and admins change roles.',
    ),
    error.el,
  );
  const card = h('div', { class: 'card' });
  section.append(card);
  const members = await api(`/v1/orgs/${enc(s.orgId)}/members`);

  const rows = members.map((m) => {
    const inactive = m.status !== 'active';
    let roleCell = badge(m.role, m.role === 'member' ? '' : 'accent');
    if (s.isAdmin) {
      const select = h(
        'select',
        { 'aria-label': `Role of ${m.user_name}`, 'data-user': m.user_name },
        ROLES.map((r) => h('option', { value: r, selected: r === m.role }, r)),
      );
      select.addEventListener('change', async () => {
        const previous = m.role;
        select.disabled = true;
        error.clear();
        try {
          const updated = await api(`/v1/orgs/${enc(s.orgId)}/members/${enc(m.user_id)}`, { method: 'PATCH', body: { role: select.value } });
          m.role = updated.role ?? select.value;
          toast(`${m.user_name} is now ${m.role}.`);
        } catch (err) {
          select.value = previous;
          error.show(`Could not change the role of ${m.user_name}: ${err.message}`);
        } finally {
          select.disabled = false;
          select.focus();
        }
      });
      roleCell = select;
    }
    return h(
      'tr',
      { class: inactive ? 'inactive' : '', 'data-user': m.user_name },
      h('td', {}, displayName(m), m.user_id === s.me.user_id ? h('span', { class: 'hint' }, ' (you)') : null),
      h('td', { class: 'mono' }, m.user_name),
      h('td', {}, m.email ?? '—'),
      h('td', {}, roleCell),
      h('td', {}, badge(inactive ? 'inactive' : 'active', inactive ? 'off' : 'ok')),
      h('td', {}, SOURCES[m.source] ?? m.source),
      h(
        'td',
        {},
        // Claude Code sign-ins: an admin sees anyone's, a member their own.
        s.isAdmin || m.user_id === s.me.user_id
          ? h('a', { href: `#/settings/members/${m.user_id}/devices`, 'aria-label': `Devices of ${m.user_name}` }, 'Devices')
          : null,
        inactive && s.isAdmin ? revokeKeysButton(m) : null,
      ),
    );
  });

  /** Deactivation ends membership and sessions, not keys: the admin's action for the personal keys left behind. */
  function revokeKeysButton(m) {
    const button = h('button', { type: 'button', class: 'danger small', 'data-revoke-keys': m.user_name }, 'Revoke personal keys');
    button.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: `Revoke the personal keys of ${m.user_name}?`,
        message: ['Every personal key they own, in every team, stops working within seconds.', 'Team keys stay. This cannot be undone.'],
        confirmLabel: 'Revoke personal keys',
      });
      if (!ok) return;
      button.disabled = true;
      error.clear();
      try {
        const { revoked } = await api(`/v1/orgs/${enc(s.orgId)}/members/${enc(m.user_id)}/revoke-personal-keys`, { method: 'POST' });
        toast(
          revoked ? `Revoked ${revoked} personal ${revoked === 1 ? 'key' : 'keys'} of ${m.user_name}.` : `${m.user_name} had no live personal keys.`,
        );
      } catch (err) {
        error.show(`Could not revoke the keys of ${m.user_name}: ${err.message}`);
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }
  fill(
    card,
    h('h2', {}, `${members.length} ${members.length === 1 ? 'member' : 'members'}`),
    table('Organization members', ['Name', 'userName', 'Email', 'Role', 'Status', 'Source', ''], rows),
    members.some((m) => m.status !== 'active')
      ? h(
          'p',
          { class: 'hint' },
          'Inactive members were deprovisioned by the identity provider: they cannot sign in, and their sessions have ended. Keys they created keep working: a personal key ends when its owner leaves the team or an admin revokes it ("Revoke personal keys"); team keys belong to the team.',
        )
      : null,
  );
}
