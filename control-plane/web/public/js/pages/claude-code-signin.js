// @ts-check
import { api, enc } from '../api.js';
import { h, field, errorBox, busy, toast } from '../dom.js';

/**
 * The SSO page's card for Claude Code's /login: the team (of any workspace)
 * whose models, limits and balance a signed-in device gets, and the budget
 * each device may spend. Until it is saved, /login is refused.
 */
export async function claudeCodeSigninCard(s) {
  const [current, teamLists] = await Promise.all([
    api(`/v1/orgs/${enc(s.orgId)}/claude-code-signin`).catch((err) => {
      if (err.status === 404) return null;
      throw err;
    }),
    Promise.all(s.workspaces.map((w) => api(`/v1/workspaces/${enc(w.id)}/teams`).then((teams) => ({ w, teams })))),
  ]);
  const team = h(
    'select',
    { name: 'team_id', required: true },
    h('option', { value: '', selected: !current }, 'Choose a team…'),
    teamLists.map(({ w, teams }) =>
      h(
        'optgroup',
        { label: w.slug },
        teams.map((t) => h('option', { value: t.id, selected: t.id === current?.team_id }, t.name)),
      ),
    ),
  );
  const budget = h('input', {
    name: 'budget_usd',
    type: 'number',
    min: '0.01',
    step: '0.01',
    inputmode: 'decimal',
    placeholder: 'no budget',
    value: current?.budget_usd ?? '',
  });
  const error = errorBox();
  const form = h(
    'form',
    {
      class: 'card form',
      onsubmit: async (e) => {
        e.preventDefault();
        if (!team.value) {
          error.show('Choose the team signed-in developers belong to.');
          team.focus();
          return;
        }
        const amount = budget.value.trim() === '' ? null : Number(budget.value);
        if (amount !== null && !(amount > 0)) {
          error.show('The budget is an amount in USD above zero, or empty for none.');
          budget.focus();
          return;
        }
        error.clear();
        try {
          await busy(form, () =>
            api(`/v1/orgs/${enc(s.orgId)}/claude-code-signin`, { method: 'PUT', body: { team_id: team.value, budget_usd: amount } }),
          );
          toast('Claude Code sign-in settings saved.');
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    h('h2', {}, 'Claude Code sign-in (/login)'),
    h(
      'p',
      { class: 'hint' },
      current
        ? 'Developers sign in to Claude Code with this single sign-on; each device gets a personal key in this team.'
        : 'Not set up: Claude Code’s /login is refused until a team is chosen here.',
    ),
    field('Team of signed-in developers', team, 'Its models, rate limits and its workspace’s balance apply. The developer need not be a member.'),
    field('Budget per device (USD)', budget, 'What one signed-in device may spend over its sign-in (30 days). Empty: no budget beyond the team’s.'),
    error.el,
    h('button', { type: 'submit', class: 'primary' }, 'Save sign-in settings'),
  );
  return form;
}
