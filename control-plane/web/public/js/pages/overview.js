// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, busy, usd, usdCents, toast, copyField, codeBlock } from '../dom.js';
import { snippets } from '../snippets.js';

/** Below this, or under this many days at the last week's pace, the balance is called low. */
const LOW_BALANCE_USD = 1;
const LOW_BALANCE_DAYS = 7;

/** Workspace: balance, credits (admin), base URLs and SDK snippets. */
export async function overviewPage(section, s) {
  fill(section, h('h1', { tabindex: '-1' }, 'Workspace'));
  if (!s.workspace) {
    section.append(h('p', { class: 'error', role: 'alert' }, s.workspaceError ?? 'This organization has no workspace yet.'));
    return;
  }
  const ws = await api(`/v1/workspaces/${enc(s.workspace.id)}`);
  fill(section, h('h1', { tabindex: '-1' }, 'Workspace ', h('span', { class: 'muted' }, ws.slug)));

  const balanceValue = h('p', { class: 'balance', id: 'balance' });
  const balanceNote = h('p', { class: 'hint' });
  const lowBalance = h('p', { class: 'warning', id: 'low-balance', role: 'status', hidden: true });
  // The last 7 days' spend tells how long the balance lasts at that pace.
  const week = await api(`/v1/workspaces/${enc(ws.id)}/usage?from=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`).catch(() => null);
  const perDay = week ? week.totals.spend_usd / 7 : 0;
  const showBalance = (value) => {
    const n = Number(value);
    const shown = usdCents(value);
    balanceValue.textContent = shown.text;
    balanceValue.title = `Exactly ${shown.title}`;
    balanceNote.textContent = n > 0 ? 'Requests are billed against this balance.' : 'Keys cannot make requests until the balance is positive.';
    balanceNote.classList.toggle('warn', !(n > 0));
    const days = perDay > 0 ? n / perDay : Infinity;
    const low = n > 0 && (n < LOW_BALANCE_USD || days < LOW_BALANCE_DAYS);
    lowBalance.hidden = !low;
    lowBalance.textContent = !low
      ? ''
      : days < LOW_BALANCE_DAYS
        ? `Low balance: at the last 7 days' pace (${usdCents(perDay).text} a day) it lasts about ${days < 1 ? 'less than a day' : `${Math.floor(days)} day${Math.floor(days) === 1 ? '' : 's'}`}. Add credits before keys start being refused.`
        : `Low balance: less than ${usd(LOW_BALANCE_USD)} left. Add credits before keys start being refused.`;
  };
  showBalance(ws.balance_usd);

  const balanceCard = h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Balance'),
    balanceValue,
    balanceNote,
    lowBalance,
    h('p', { class: 'hint' }, h('a', { href: '#/usage' }, 'Where the money went →')),
  );
  if (s.isAdmin) balanceCard.append(creditsForm(ws, showBalance));

  const endpoints = h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Endpoints'),
    h('p', { class: 'hint' }, 'Point any OpenAI- or Anthropic-compatible client at these base URLs and use an API key from this workspace.'),
    copyField('Chat Completions base URL (OpenAI format)', ws.chat_completions_base_url),
    copyField('Messages base URL (Anthropic format)', ws.messages_base_url),
  );

  section.append(h('div', { class: 'grid two' }, balanceCard, endpoints), await snippetCard(ws, s));
}

function creditsForm(ws, showBalance) {
  const amount = h('input', { type: 'number', min: '0.01', step: '0.01', inputmode: 'decimal', required: true, placeholder: '100.00' });
  const error = errorBox();
  const form = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (e) => {
        e.preventDefault();
        const value = Number(amount.value);
        if (!(value > 0)) {
          error.show('Enter a positive amount in US dollars.');
          amount.focus();
          return;
        }
        error.clear();
        try {
          const result = await busy(form, () => api(`/v1/workspaces/${enc(ws.id)}/credits`, { method: 'POST', body: { amount_usd: value } }));
          showBalance(result.balance_usd);
          amount.value = '';
          toast(`Added ${usd(value)} in credits.`);
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    field('Add credits (USD)', amount),
    h('button', { type: 'submit', class: 'primary' }, 'Add credits'),
    error.el,
  );
  return form;
}

/** The aliases the workspace's teams may call; the snippets use one of them. */
async function allowedAliases(ws) {
  try {
    const teams = await api(`/v1/workspaces/${enc(ws.id)}/teams`);
    const lists = await Promise.all(
      teams.map((t) =>
        api(`/v1/teams/${enc(t.id)}/models`).then(
          (r) => r.models,
          () => [],
        ),
      ),
    );
    return [...new Set(lists.flat())];
  } catch {
    return [];
  }
}

async function snippetCard(ws, s) {
  let aliases = await allowedAliases(ws);
  let note = null;
  if (!aliases.length) {
    const catalog = await api('/v1/models').catch(() => []);
    aliases = catalog.map((m) => m.alias);
    note = h(
      'p',
      { class: 'hint warn' },
      'No team is allowed a model yet: ',
      s.isAdmin ? h('a', { href: '#/teams' }, 'choose models under Teams → Model access') : 'ask an admin to allow one for your team',
      ' before these examples will work.',
    );
  }
  const model = h(
    'select',
    {},
    aliases.map((a) => h('option', { value: a }, a)),
  );
  const tabs = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Example' });
  const output = h('div');
  let current = 'py-openai';
  const draw = () => {
    const list = snippets({ chatBaseUrl: ws.chat_completions_base_url, messagesBaseUrl: ws.messages_base_url, model: model.value || 'tg/model' });
    fill(
      tabs,
      list.map((sn) =>
        h(
          'button',
          {
            type: 'button',
            'aria-pressed': String(sn.id === current),
            onclick: () => {
              current = sn.id;
              draw();
              tabs.querySelector('[aria-pressed="true"]')?.focus();
            },
          },
          sn.label,
        ),
      ),
    );
    const chosen = list.find((sn) => sn.id === current) ?? list[0];
    fill(output, codeBlock(chosen.label, chosen.code));
  };
  model.addEventListener('change', draw);
  draw();
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Call a model'),
    h('p', { class: 'hint' }, 'Set TOLLGATE_API_KEY to a key from ', h('a', { href: '#/keys' }, 'API keys'), ', then run one of these.'),
    note,
    h('div', { class: 'field narrow' }, field('Model', model)),
    tabs,
    output,
  );
}
