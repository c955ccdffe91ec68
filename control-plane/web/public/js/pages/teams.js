// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, busy, toast, table, confirmDialog, usd, usdCents } from '../dom.js';

/** Teams of the current workspace; admins create them here. */
export async function teamsPage(section, s, { navigate }) {
  fill(section, h('h1', { tabindex: '-1' }, 'Teams'));
  if (!s.workspace) return;
  const list = h('div', { class: 'card' }, h('h2', {}, 'Teams in this workspace'));
  section.append(list);
  if (s.isAdmin) section.append(createTeamForm(s, navigate));

  const teams = await api(`/v1/workspaces/${enc(s.workspace.id)}/teams`);
  if (!teams.length) {
    list.append(h('p', { class: 'empty' }, s.isAdmin ? 'No teams yet. Create one below.' : 'No teams yet. An admin creates them.'));
    return;
  }
  // Each team with what tells teams apart: who is in it, what it may call, what it spent.
  const modelsCell = (t) =>
    t.models.length
      ? h(
          'span',
          { class: 'models' },
          t.models.map((a, i) => [
            i ? ', ' : '',
            t.stale_models.includes(a)
              ? h(
                  's',
                  { class: 'stale', title: 'Not in the models file: this grant gives no access now, and would again if the alias came back.' },
                  a,
                )
              : h('span', { class: 'mono' }, a),
          ]),
        )
      : h('span', { class: 'muted' }, 'none');
  list.append(
    table(
      'Teams in this workspace',
      ['Team', 'Members', 'Models', 'Spend', ''],
      teams.map((t) =>
        h(
          'tr',
          { 'data-team': t.name },
          h('td', {}, h('a', { href: `#/teams/${t.id}` }, t.name)),
          h('td', { class: 'num' }, String(t.member_count)),
          h('td', {}, modelsCell(t)),
          h('td', { class: 'num', title: usd(t.spend_usd) }, usdCents(t.spend_usd).text),
          h('td', {}, h('a', { class: 'subtle', href: `#/keys?team=${t.id}` }, 'Keys')),
        ),
      ),
    ),
  );
  if (teams.some((t) => t.stale_models.length)) {
    list.append(
      h(
        'p',
        { class: 'warning', role: 'status' },
        'Struck-through models are granted but no longer in the models file: they give no access now, and would again if the alias were added back. Save the team’s model access to drop them.',
      ),
    );
  }
}

function createTeamForm(s, navigate) {
  const name = h('input', { name: 'team', required: true, maxlength: 100, placeholder: 'Platform' });
  const error = errorBox();
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        if (!name.value.trim()) {
          error.show('Give the team a name.');
          name.focus();
          return;
        }
        error.clear();
        try {
          const team = await busy(form, () =>
            api(`/v1/workspaces/${enc(s.workspace.id)}/teams`, { method: 'POST', body: { name: name.value.trim() } }),
          );
          toast(`Team “${team.name}” created.`);
          navigate(`#/teams/${team.id}`);
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    h('h2', {}, 'Create a team'),
    h('div', { class: 'inline-form' }, field('Team name', name), h('button', { type: 'submit', class: 'primary' }, 'Create team')),
    error.el,
  );
  return form;
}

/** One team: its members, its model access ("My Team → Model access") and a way to its keys. */
export async function teamPage(section, s, { match }) {
  const teamId = match[1];
  const team = await api(`/v1/teams/${enc(teamId)}`);
  fill(
    section,
    h('p', { class: 'crumbs' }, h('a', { href: '#/teams' }, 'Teams'), ' / '),
    h('h1', { tabindex: '-1' }, team.name),
    h('p', {}, h('a', { href: `#/keys?team=${team.id}` }, 'API keys of this team →')),
  );
  const membersCard = h('div', { class: 'card' });
  const modelsCard = h('div', { class: 'card' });
  section.append(h('div', { class: 'grid two' }, modelsCard, membersCard));
  await Promise.all([renderModels(modelsCard, team, s), renderMembers(membersCard, team, s)]);
}

async function renderModels(card, team, s) {
  const [catalog, allowed] = await Promise.all([api('/v1/models'), api(`/v1/teams/${enc(team.id)}/models`)]);
  const chosen = new Set(allowed.models);
  const error = errorBox();
  // Grants the models file no longer has: shown struck through, unchecked; saving drops them.
  const stale = (allowed.stale_models ?? []).map((alias) =>
    h(
      'li',
      { class: 'stale-grant' },
      h('label', { class: 'check' }, h('input', { type: 'checkbox', disabled: true }), h('s', { class: 'mono stale' }, alias)),
      h('span', { class: 'hint warn' }, 'not in the models file: no access now; back if the alias returns'),
    ),
  );
  const boxes = catalog.map((m) => {
    const box = h('input', { type: 'checkbox', name: 'model', value: m.alias, checked: chosen.has(m.alias), disabled: !s.isAdmin });
    return h(
      'li',
      {},
      h('label', { class: 'check' }, box, h('span', { class: 'mono' }, m.alias)),
      h('span', { class: 'hint' }, `${usd(m.input_usd_per_mtok)} in · ${usd(m.output_usd_per_mtok)} out per 1M tokens`),
    );
  });
  const form = h(
    'form',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const models = [...form.querySelectorAll('input[name=model]:checked')].map((b) => b.value);
        error.clear();
        try {
          const saved = await busy(form, () => api(`/v1/teams/${enc(team.id)}/models`, { method: 'PUT', body: { models } }));
          toast(`Model access saved: ${saved.models.length ? saved.models.join(', ') : 'no models'}.`);
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    h('fieldset', {}, h('legend', { class: 'visually-hidden' }, 'Models this team may call'), h('ul', { class: 'check-list' }, boxes, stale)),
    error.el,
    s.isAdmin ? h('button', { type: 'submit', class: 'primary' }, 'Save model access') : null,
  );
  fill(
    card,
    h('h2', {}, 'Model access'),
    h(
      'p',
      { class: 'hint' },
      s.isAdmin ? 'Keys of this team may call only the models checked here.' : 'Keys of this team may call these models. Only admins change this.',
    ),
    catalog.length ? form : h('p', { class: 'empty' }, 'No models are configured on this gateway.'),
  );
}

async function renderMembers(card, team, s) {
  const members = await api(`/v1/teams/${enc(team.id)}/members`);
  const error = errorBox();
  const rows = members.map((m) =>
    h(
      'tr',
      {},
      h('td', {}, m.user_name, m.user_id === s.me.user_id ? h('span', { class: 'hint' }, ' (you)') : null),
      s.isAdmin
        ? h(
            'td',
            { class: 'actions-cell' },
            h(
              'button',
              {
                type: 'button',
                class: 'danger small',
                'aria-label': `Remove ${m.user_name} from ${team.name}`,
                onclick: async () => {
                  const ok = await confirmDialog({
                    title: `Remove ${m.user_name}?`,
                    message: [`${m.user_name} leaves ${team.name}.`, 'Their personal keys in this team are revoked. Team keys keep working.'],
                    confirmLabel: 'Remove member',
                  });
                  if (!ok) return;
                  try {
                    await api(`/v1/teams/${enc(team.id)}/members/${enc(m.user_id)}`, { method: 'DELETE' });
                    toast(`${m.user_name} removed from ${team.name}.`);
                    await renderMembers(card, team, s);
                  } catch (err) {
                    error.show(err.message);
                  }
                },
              },
              'Remove',
            ),
          )
        : null,
    ),
  );
  fill(
    card,
    h('h2', {}, 'Members'),
    error.el,
    members.length ? table(`Members of ${team.name}`, s.isAdmin ? ['User', ''] : ['User'], rows) : h('p', { class: 'empty' }, 'No members yet.'),
  );
  if (s.isAdmin) card.append(await addMemberForm(card, team, s, members));
}

async function addMemberForm(card, team, s, current) {
  const inTeam = new Set(current.map((m) => m.user_id));
  const org = await api(`/v1/orgs/${enc(s.orgId)}/members`);
  const candidates = org.filter((m) => m.status === 'active' && !inTeam.has(m.user_id));
  if (!candidates.length) return h('p', { class: 'hint' }, 'Every active member of the organization is in this team.');
  const user = h(
    'select',
    { name: 'user' },
    candidates.map((m) => h('option', { value: m.user_id }, m.email && m.email !== m.user_name ? `${m.user_name} (${m.email})` : m.user_name)),
  );
  const error = errorBox();
  const form = h(
    'form',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        error.clear();
        try {
          await busy(form, () => api(`/v1/teams/${enc(team.id)}/members`, { method: 'POST', body: { user_id: user.value } }));
          toast(`${user.selectedOptions[0]?.textContent ?? 'Member'} added to ${team.name}.`);
          await renderMembers(card, team, s);
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    h('div', { class: 'inline-form' }, field('Add a member', user), h('button', { type: 'submit', class: 'primary' }, 'Add to team')),
    error.el,
  );
  return form;
}
