// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, busy, toast, table, confirmDialog, openDialog, lockDialog, copyField, money, when, badge } from '../dom.js';
import { editKeyDialog, periodSelect, rotateKeyDialog } from './key-dialogs.js';

function statusOf(key) {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && new Date(key.expires_at).getTime() <= Date.now()) return 'expired';
  return 'active';
}

function limitsOf(k) {
  const parts = [];
  if (k.rpm) parts.push(`${k.rpm.toLocaleString('en-US')} req/min`);
  if (k.tpm) parts.push(`${k.tpm.toLocaleString('en-US')} tokens/min`);
  return parts.join(' · ');
}

/**
 * API keys across the workspace's teams on one page, filterable by team:
 * create (secret shown once), list, revoke. Admins see every team's keys,
 * members those of their own teams.
 */
export async function keysPage(section, s, { params, navigate }) {
  fill(section, h('h1', { tabindex: '-1' }, 'API keys'));
  if (!s.workspace) return;
  const teams = await api(`/v1/workspaces/${enc(s.workspace.id)}/teams`);
  if (!teams.length) {
    section.append(
      h(
        'p',
        { class: 'empty' },
        'Keys belong to a team. ',
        s.isAdmin ? h('a', { href: '#/teams' }, 'Create a team first.') : 'Ask an admin to add you to a team.',
      ),
    );
    return;
  }
  const team = teams.find((t) => t.id === params.get('team')) ?? null;
  // Who may create which kind of key in which team: personal keys for the team's own members (admins too), team keys for admins.
  const memberships = await Promise.all(teams.map((t) => api(`/v1/teams/${enc(t.id)}/members`).catch(() => [])));
  const choices = teams
    .map((t, i) => ({ team: t, may: { personal: memberships[i].some((m) => m.user_id === s.me.user_id), team: s.isAdmin } }))
    .filter((c) => c.may.personal || c.may.team);
  const picker = h(
    'select',
    { name: 'team', onchange: (e) => navigate(e.target.value ? `#/keys?team=${e.target.value}` : '#/keys') },
    h('option', { value: '', selected: !team }, 'All teams'),
    teams.map((t) => h('option', { value: t.id, selected: t.id === team?.id }, t.name)),
  );
  const listCard = h('div', { class: 'card' });
  const offered = team ? choices.filter((c) => c.team.id === team.id) : choices;
  const refresh = () => renderKeys(listCard, s, team);
  const create = h(
    'button',
    {
      type: 'button',
      class: 'primary',
      disabled: !offered.length,
      onclick: () => createKeyDialog(offered, s, refresh),
    },
    'Create key',
  );
  const toolbar = h('div', { class: 'toolbar' }, field('Team', picker), create);
  if (!offered.length) {
    // The API lists a team's keys only to its members and to admins.
    const which = team ?? (teams.length === 1 ? teams[0] : null);
    section.append(
      toolbar,
      h(
        'p',
        { class: 'notice' },
        which
          ? `You are not a member of ${which.name}, so you cannot see or create its keys.`
          : 'You are not a member of any team here, so you cannot see or create keys. Ask an admin to add you to a team.',
      ),
    );
    return;
  }
  section.append(toolbar, listCard);
  await refresh();
}

async function renderKeys(card, s, team) {
  const q = team ? `?team_id=${enc(team.id)}` : '';
  const [keys, members] = await Promise.all([
    api(`/v1/workspaces/${enc(s.workspace.id)}/keys${q}`),
    api(`/v1/orgs/${enc(s.orgId)}/members`).catch(() => []),
  ]);
  const names = new Map(members.map((m) => [m.user_id, m.user_name]));
  const error = errorBox();
  const rows = keys.map((k) => {
    const status = statusOf(k);
    const mayRevoke = status === 'active' && (s.isAdmin || (k.kind === 'personal' && k.owner_user_id === s.me.user_id));
    const redraw = () => renderKeys(card, s, team);
    return h(
      'tr',
      { class: status === 'active' ? '' : 'inactive', 'data-team': k.team_name },
      h('td', {}, k.name, limitsOf(k) ? h('span', { class: 'hint block' }, limitsOf(k)) : null),
      h('td', { class: 'mono nowrap' }, `${k.prefix}…${k.last4}`),
      team ? null : h('td', {}, h('a', { class: 'subtle', href: `#/keys?team=${k.team_id}` }, k.team_name)),
      h('td', {}, k.kind === 'team' ? 'Team' : (names.get(k.owner_user_id) ?? 'Former member')),
      h('td', { class: 'num' }, k.budget_period ? money(k.period_spend_usd) : money(k.spend_usd), k.budget_usd != null ? budgetBar(k) : null),
      h('td', {}, k.last_used_at ? when(k.last_used_at) : 'Never'),
      h(
        'td',
        {},
        badge(status, status === 'active' ? 'ok' : 'off'),
        status === 'active' && k.expires_at ? h('span', { class: 'hint block' }, `until ${when(k.expires_at)}`) : null,
        status === 'active' && k.previous_expires_at ? h('span', { class: 'hint block' }, `old secret until ${when(k.previous_expires_at)}`) : null,
      ),
      h(
        'td',
        { class: 'actions-cell' },
        // Members edit their own personal keys only where the org allows it; the server says so if not.
        mayRevoke
          ? h('button', { type: 'button', class: 'small', 'aria-label': `Edit key ${k.name}`, onclick: () => editKeyDialog(k, redraw) }, 'Edit')
          : null,
        mayRevoke
          ? h('button', { type: 'button', class: 'small', 'aria-label': `Rotate key ${k.name}`, onclick: () => rotateKeyDialog(k, redraw) }, 'Rotate')
          : null,
        mayRevoke
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger small',
                'aria-label': `Revoke key ${k.name}`,
                onclick: async () => {
                  const ok = await confirmDialog({
                    title: `Revoke “${k.name}”?`,
                    message: [`Key ${k.prefix}…${k.last4} stops working within seconds, everywhere.`, 'This cannot be undone.'],
                    confirmLabel: 'Revoke key',
                  });
                  if (!ok) return;
                  try {
                    await api(`/v1/keys/${enc(k.id)}`, { method: 'DELETE' });
                    toast(`Key “${k.name}” revoked.`);
                    await renderKeys(card, s, team);
                  } catch (err) {
                    error.show(err.message);
                  }
                },
              },
              'Revoke',
            )
          : null,
      ),
    );
  });
  const headers = ['Name', 'Key', ...(team ? [] : ['Team']), 'Owner', 'Spend', 'Last used', 'Status', ''];
  const title = team ? `Keys of ${team.name}` : s.isAdmin ? 'Keys of every team' : 'Keys of your teams';
  fill(
    card,
    h('h2', {}, title),
    error.el,
    keys.length
      ? table(team ? `API keys of ${team.name}` : 'API keys across teams', headers, rows)
      : h('p', { class: 'empty' }, 'No keys yet. Create one to call models from code.'),
  );
}

function optionalNumber(input, { integer }) {
  const raw = input.value.trim();
  if (raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) return NaN;
  return n;
}

const LAST_KEY_TEAM = 'tollgate.keyTeam';

function rememberKeyTeam(teamId) {
  try {
    localStorage.setItem(LAST_KEY_TEAM, teamId);
  } catch {
    // Storage refused (private mode): the default falls back to the user's own team.
  }
}

/**
 * The team the Create key dialog starts on: the one the user last created a
 * key in, else the first team they belong to (where their personal key
 * goes), else the first they may use — never just the alphabetically first.
 */
function defaultChoice(choices) {
  let last = null;
  try {
    last = localStorage.getItem(LAST_KEY_TEAM);
  } catch {
    last = null;
  }
  return choices.find((c) => c.team.id === last) ?? choices.find((c) => c.may.personal) ?? choices[0];
}

/** `choices`: the teams the user may create a key in, with the kinds allowed in each. */
function createKeyDialog(choices, s, onDone) {
  let created = false;
  let { team, may } = defaultChoice(choices);
  openDialog({
    title: choices.length === 1 ? `Create a key for ${team.name}` : 'Create a key',
    onClose: () => {
      if (created) onDone();
    },
    body: (close, content) => {
      const name = h('input', { name: 'name', required: true, maxlength: 100, placeholder: 'ci-pipeline', autofocus: true });
      const personal = h('input', {
        type: 'radio',
        name: 'kind',
        value: 'personal',
        checked: may.personal,
        id: 'kind-personal',
        disabled: !may.personal,
      });
      const teamKind = h('input', { type: 'radio', name: 'kind', value: 'team', checked: !may.personal, id: 'kind-team', disabled: !may.team });
      const budget = h('input', { name: 'budget', type: 'number', min: '0.01', step: '0.01', inputmode: 'decimal', placeholder: 'No limit' });
      const period = periodSelect(null);
      const rpm = h('input', { name: 'rpm', type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'No limit' });
      const tpm = h('input', { name: 'tpm', type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'No limit' });
      const expires = h('input', { name: 'expires', type: 'date' });
      const personalText = h('span');
      const teamText = h('span');
      // The kinds offered follow the chosen team: a personal key only in a team of one's own.
      const offer = () => {
        personal.disabled = !may.personal;
        teamKind.disabled = !may.team;
        if (personal.disabled) teamKind.checked = true;
        else if (teamKind.disabled) personal.checked = true;
        personalText.textContent = may.personal
          ? ' — yours; it ends when you leave the team (or an admin revokes it)'
          : ` — only members of ${team.name} create personal keys`;
        teamText.textContent = s.isAdmin ? ' — owned by the team; survives membership changes' : ' — only admins create team keys';
      };
      const teamSelect = h(
        'select',
        {
          name: 'team',
          onchange: () => {
            ({ team, may } = choices.find((c) => c.team.id === teamSelect.value) ?? choices[0]);
            offer();
          },
        },
        choices.map((c) => h('option', { value: c.team.id, selected: c.team.id === team.id }, c.team.name)),
      );
      const error = errorBox();
      const form = h(
        'form',
        {
          onsubmit: async (e) => {
            e.preventDefault();
            const body = { kind: form.elements.kind.value, name: name.value.trim() };
            const problems = [];
            if (!body.name) problems.push('Give the key a name.');
            const numbers = {
              budget_usd: optionalNumber(budget, { integer: false }),
              rpm: optionalNumber(rpm, { integer: true }),
              tpm: optionalNumber(tpm, { integer: true }),
            };
            for (const [k, v] of Object.entries(numbers)) {
              if (Number.isNaN(v))
                problems.push(k === 'budget_usd' ? 'Budget must be a positive amount.' : `${k.toUpperCase()} must be a positive whole number.`);
              else if (v !== undefined) body[k] = v;
            }
            if (period.value) {
              if (body.budget_usd === undefined) problems.push('A period needs a budget.');
              else body.budget_period = period.value;
            }
            if (expires.value) {
              // The key works through the whole chosen day, in the user's time zone.
              const end = new Date(`${expires.value}T23:59:59`);
              if (Number.isNaN(end.getTime()) || end.getTime() <= Date.now()) problems.push('The expiry date must be in the future.');
              else body.expires_at = end.toISOString();
            }
            if (problems.length) {
              error.show(problems.join(' '));
              return;
            }
            error.clear();
            try {
              const key = await busy(form, () => api(`/v1/teams/${enc(team.id)}/keys`, { method: 'POST', body }));
              rememberKeyTeam(team.id);
              created = true;
              showSecret(content, key, close);
            } catch (err) {
              error.show(err.message);
            }
          },
        },
        choices.length > 1 ? field('For team', teamSelect) : null,
        field('Name', name, 'Where the key will be used, so you recognize it later.'),
        h(
          'fieldset',
          { class: 'kind' },
          h('legend', {}, 'Kind'),
          h('label', { class: 'check', for: 'kind-personal' }, personal, h('span', {}, h('strong', {}, 'Personal'), personalText)),
          h('label', { class: 'check', for: 'kind-team' }, teamKind, h('span', {}, h('strong', {}, 'Team'), teamText)),
        ),
        h('div', { class: 'grid two' }, field('Budget (USD)', budget), field('Budget applies', period)),
        h('div', { class: 'grid two' }, field('Requests / minute', rpm), field('Tokens / minute', tpm)),
        field('Expires on', expires, 'Optional. Leave empty for a key that does not expire.'),
        error.el,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: close }, 'Cancel'),
          h('button', { type: 'submit', class: 'primary' }, 'Create key'),
        ),
      );
      offer();
      return form;
    },
  });
}

/** The one and only time the key is visible; closing the dialog removes it from the page. */
function showSecret(content, key, close) {
  const done = h('button', { type: 'button', class: 'primary', onclick: close }, 'I have copied it — close');
  fill(
    content,
    h('p', { class: 'warning', role: 'alert' }, 'Copy this key now. It will not be shown again.'),
    copyField(`API key “${key.name}”`, key.key, { secret: true }),
    h('p', { class: 'hint' }, 'Store it in your secret manager or as TOLLGATE_API_KEY. Anyone with it can spend this workspace’s balance.'),
    h('div', { class: 'actions' }, done),
  );
  lockDialog(content);
  content.querySelector('input')?.focus();
}

const PER = { day: ' / day', week: ' / week', month: ' / month' };

/** Spent of budget (this period's, for a period budget), as text and as a bar (a native <progress>: no inline style under the CSP). */
function budgetBar(k) {
  const budget = Number(k.budget_usd);
  const spent = Number(k.budget_period ? k.period_spend_usd : k.spend_usd);
  const ratio = budget > 0 ? Math.min(1, spent / budget) : 1;
  return h(
    'span',
    { class: 'budget' },
    h('span', { class: 'hint' }, ' of ', money(budget), k.budget_period ? PER[k.budget_period] : ''),
    h('progress', {
      max: '1',
      value: String(ratio),
      class: ratio >= 0.9 ? 'budget-bar high' : 'budget-bar',
      'aria-label': `${Math.round(ratio * 100)}% of the budget spent`,
    }),
    k.period_resets_at ? h('span', { class: 'hint block' }, `resets ${when(k.period_resets_at)}`) : null,
  );
}
