// @ts-check
import { api, enc } from '../api.js';
import { h, fill, errorBox, toast, table, badge, confirmDialog, when } from '../dom.js';

/** A device's state as one word: a session ends by revocation (admin, sign-out, SCIM) or by expiry. */
function stateOf(d) {
  if (d.revoked_at) return badge('revoked', 'off');
  if (Date.parse(d.expires_at) <= Date.now()) return badge('expired', 'off');
  return badge('signed in', 'ok');
}

/** Settings → Members → Devices: where a member's Claude Code is signed in (/login), and the way to end it. */
export async function devicesPage(section, s, { match }) {
  const userId = match[1];
  const error = errorBox();
  const [members, devices] = await Promise.all([
    api(`/v1/orgs/${enc(s.orgId)}/members`),
    api(`/v1/orgs/${enc(s.orgId)}/members/${enc(userId)}/devices`),
  ]);
  const member = members.find((m) => m.user_id === userId);
  const who = member?.user_name ?? 'this member';
  const base = `/v1/orgs/${enc(s.orgId)}/members/${enc(userId)}/devices`;

  /** Ends one session (a device id) or all of them; the page is drawn again from the server's answer. */
  async function revoke(deviceId) {
    const ok = await confirmDialog({
      title: deviceId ? `Sign out this device of ${who}?` : `Sign out every device of ${who}?`,
      message: [
        'Claude Code there stops working within seconds and cannot refresh its sign-in.',
        'Running /login again signs it back in, if their membership is active.',
      ],
      confirmLabel: deviceId ? 'Sign out device' : 'Sign out all devices',
    });
    if (!ok) return;
    error.clear();
    try {
      const { revoked } = await api(deviceId ? `${base}/${enc(deviceId)}/revoke` : `${base}/revoke`, { method: 'POST' });
      toast(revoked ? `Signed out ${revoked} ${revoked === 1 ? 'device' : 'devices'} of ${who}.` : `${who} had no signed-in devices.`);
      await devicesPage(section, s, { match });
    } catch (err) {
      error.show(`Could not sign out: ${err.message}`);
    }
  }

  const live = devices.filter((d) => !d.revoked_at && Date.parse(d.expires_at) > Date.now());
  const rows = devices.map((d) =>
    h(
      'tr',
      { class: live.includes(d) ? '' : 'inactive', 'data-device': d.id },
      h('td', { class: 'mono' }, d.client_version ?? 'unknown client'),
      h('td', {}, when(d.created_at)),
      h('td', {}, d.last_used_at ? when(d.last_used_at) : 'never'),
      h('td', {}, when(d.expires_at)),
      h('td', {}, stateOf(d)),
      h(
        'td',
        {},
        live.includes(d)
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger small',
                'aria-label': `Sign out ${d.client_version ?? 'device'} signed in ${when(d.created_at)}`,
                onclick: () => revoke(d.id),
              },
              'Sign out',
            )
          : null,
      ),
    ),
  );
  fill(
    section,
    h('p', { class: 'crumbs' }, h('a', { href: '#/settings/members' }, 'Members'), ' / '),
    h('h1', { tabindex: '-1' }, `Devices of ${who}`),
    h(
      'p',
      { class: 'hint' },
      'Each sign-in of Claude Code with /login is a device: a personal key in the organization’s sign-in team that refreshes itself. ',
      'Deactivating the member (SCIM) signs out all of them.',
    ),
    error.el,
    h(
      'div',
      { class: 'card' },
      h(
        'h2',
        {},
        `${live.length} signed in`,
        devices.length > live.length ? h('span', { class: 'hint' }, ` · ${devices.length - live.length} ended`) : null,
      ),
      devices.length
        ? table(`Claude Code devices of ${who}`, ['Client', 'Signed in', 'Last used', 'Sign-in ends', 'State', ''], rows)
        : h('p', { class: 'hint' }, `${who} has not signed in to Claude Code with /login.`),
      live.length ? h('button', { type: 'button', class: 'danger', onclick: () => revoke(undefined) }, 'Sign out all devices') : null,
    ),
  );
}
