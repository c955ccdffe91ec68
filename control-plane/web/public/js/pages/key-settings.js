// @ts-check
import { api, enc } from '../api.js';
import { h, fill, errorBox, toast, busy } from '../dom.js';

/**
 * Settings → Keys (owners and admins): whether members may change their own
 * personal keys. Off by default, because a budget is usually what an admin
 * sets to bound a member's spending; each change is audited by the API.
 */
export async function keySettingsPage(section, s) {
  fill(section, h('h1', { tabindex: '-1' }, 'Key settings'));
  const url = `/v1/orgs/${enc(s.orgId)}/key-settings`;
  const error = errorBox();
  const card = h('div', { class: 'card', id: 'key-settings' });
  section.append(error.el, card);
  const draw = (settings) => {
    const box = h('input', {
      type: 'checkbox',
      id: 'members-edit-own-keys',
      name: 'members_edit_own_keys',
      checked: settings.members_edit_own_keys,
      onchange: async () => {
        error.clear();
        try {
          const next = await busy(card, () => api(url, { method: 'PUT', body: { members_edit_own_keys: box.checked } }));
          draw(next);
          toast(next.members_edit_own_keys ? 'Members may now change their own keys.' : 'Only owners and admins may change keys now.');
        } catch (err) {
          box.checked = !box.checked;
          error.show(err instanceof Error ? err.message : String(err));
        }
      },
    });
    fill(
      card,
      h('h2', {}, 'Members and their keys'),
      h('div', { class: 'field' }, h('label', { for: box.id }, box, ' Members may change their own personal keys')),
      h(
        'p',
        { class: 'hint' },
        'Name, budget, period, limits and expiry of a personal key they own. Off, only owners and admins change keys; members still rotate and revoke their own.',
      ),
    );
  };
  draw(await api(url));
}
