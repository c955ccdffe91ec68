// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, when, table, badge, copyButton } from '../dom.js';

const DAY_MS = 86_400_000;
/** With no range chosen, the page looks this many days back (today included). */
const DEFAULT_DAYS = 7;

/** Each reason Tollgate refuses a call for: what it means, and what to do about it. */
export const REASONS = {
  budget: {
    name: 'Key budget',
    why: "The key's remaining budget could not cover the call's worst case.",
    fix: "Raise the key's budget, or send a smaller max_tokens.",
  },
  balance: { name: 'Workspace balance', why: 'The workspace balance could not cover the call.', fix: 'Add credits to the workspace.' },
  rate_limit: {
    name: 'Rate limit',
    why: "The key's requests or tokens per minute were used up.",
    fix: 'Wait for the minute to roll over (the answer says how long), or raise the key’s limits.',
  },
  model_access: {
    name: 'Model access',
    why: "The model does not exist, or the key's team may not use it.",
    fix: "Check the model name against the Models page, or the team's models.",
  },
  key: {
    name: 'Key',
    why: "The key was revoked or expired, or sent to another workspace's URL.",
    fix: 'Create a new key; check the workspace slug in the base URL.',
  },
  bad_request: {
    name: 'Bad request',
    why: 'The request body was refused: not JSON, a missing field, or too large.',
    fix: "The answer's message names the field; check the client's settings.",
  },
};

const count = (n) => Number(n ?? 0).toLocaleString('en-US');

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

/** Refusals: calls Tollgate itself refused, by reason, key and model — "why did my agent stop". */
export async function refusalsPage(section, s, { params, navigate }) {
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Refusals'),
    h(
      'p',
      { class: 'hint' },
      'Calls Tollgate itself refused before they reached a provider — why an agent stopped. They cost nothing and are counted apart from the requests on the Usage page.',
    ),
  );
  if (!s.workspace) {
    section.append(h('p', { class: 'error', role: 'alert' }, s.workspaceError ?? 'This organization has no workspace yet.'));
    return;
  }
  const base = `/v1/workspaces/${enc(s.workspace.id)}/usage`;
  const today = new Date();
  const state = {
    from: params.get('from') ?? isoDay(new Date(today.getTime() - (DEFAULT_DAYS - 1) * DAY_MS)),
    to: params.get('to') ?? isoDay(today),
    reason: Object.hasOwn(REASONS, params.get('reason') ?? '') ? params.get('reason') : '',
  };
  const fromInput = h('input', { type: 'date', value: state.from, max: isoDay(today) });
  const toInput = h('input', { type: 'date', value: state.to, max: isoDay(today) });
  const reasonSelect = h(
    'select',
    {},
    [['', 'All reasons'], ...Object.entries(REASONS).map(([id, r]) => [id, r.name])].map(([v, label]) =>
      h('option', { value: v, selected: v === state.reason }, label),
    ),
  );
  const apply = () => {
    const q = new URLSearchParams({ from: fromInput.value, to: toInput.value });
    if (reasonSelect.value) q.set('reason', reasonSelect.value);
    navigate(`#/refusals?${q}`);
  };
  for (const control of [fromInput, toInput, reasonSelect]) control.addEventListener('change', apply);
  section.append(
    h(
      'form',
      { class: 'card usage-filters', 'aria-label': 'Refusal filters', onsubmit: (e) => (e.preventDefault(), apply()) },
      field('From (UTC)', fromInput),
      field('To (UTC)', toInput),
      field('Reason', reasonSelect),
    ),
  );

  const range = new URLSearchParams({
    from: `${state.from}T00:00:00Z`,
    to: new Date(new Date(`${state.to}T00:00:00Z`).getTime() + DAY_MS).toISOString(),
    refused: 'true',
  });
  if (state.reason) range.set('reason', state.reason);
  const q = (extra) => {
    const out = new URLSearchParams(range);
    for (const [k, v] of Object.entries(extra)) out.set(k, v);
    return `${base}?${out}`;
  };
  let byReason;
  let byKey;
  let byModel;
  try {
    [byReason, byKey, byModel] = await Promise.all([api(q({ group_by: 'reason' })), api(q({ group_by: 'key' })), api(q({ group_by: 'model' }))]);
  } catch (err) {
    section.append(h('p', { class: 'error', role: 'alert' }, err.message));
    return;
  }
  section.append(
    reasonCards(byReason),
    h('div', { class: 'grid two' }, topList('By key', 'refusals-by-key', byKey), topList('By model', 'refusals-by-model', byModel)),
  );
  section.append(await refusalLog(base, range));
}

/** One card per reason that refused anything: how many, what it means, what to do. */
function reasonCards(byReason) {
  const seen = byReason.groups.filter((g) => g.refused > 0).sort((a, b) => b.refused - a.refused);
  if (!seen.length) return h('div', { class: 'card', id: 'refusal-reasons' }, h('p', { class: 'empty' }, 'Tollgate refused no call in this range.'));
  return h(
    'div',
    { class: 'card', id: 'refusal-reasons' },
    h('h2', {}, `${count(byReason.totals.refused)} calls refused`),
    h(
      'ul',
      { class: 'reason-list' },
      seen.map((g) => {
        const r = REASONS[g.id] ?? { name: g.label, why: '', fix: '' };
        return h(
          'li',
          { 'data-reason': g.id },
          h('span', { class: 'reason-count num' }, count(g.refused)),
          h('span', {}, h('strong', {}, r.name), h('span', { class: 'hint block' }, r.why), h('span', { class: 'block' }, r.fix)),
        );
      }),
    ),
  );
}

/** The groups that were refused most, as a bar list. */
function topList(title, id, summary) {
  const groups = summary.groups.filter((g) => g.refused > 0).sort((a, b) => b.refused - a.refused);
  const top = groups[0]?.refused || 1;
  return h(
    'div',
    { class: 'card', id },
    h('h2', {}, title),
    groups.length
      ? h(
          'ol',
          { class: 'bar-list' },
          groups
            .slice(0, 8)
            .map((g) =>
              h(
                'li',
                {},
                h('span', {}, g.label),
                h('span', { class: 'num' }, count(g.refused), h('span', { class: 'hint' }, ' refused')),
                h('progress', { max: String(top), value: String(g.refused), 'aria-label': `${g.label}: ${count(g.refused)} refused` }),
              ),
            ),
        )
      : h('p', { class: 'empty' }, 'Nothing refused.'),
  );
}

/** The latest refusal rows, newest first: each row one key, model and reason within about a second, with how many calls. */
async function refusalLog(base, range) {
  const csv = new URLSearchParams(range);
  csv.set('format', 'csv');
  const body = h('div');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const rows = [];
  let cursor = null;
  const headers = ['Time', 'Key', 'Model', 'Reason', 'Calls', 'Request id'];
  const load = async () => {
    const q = new URLSearchParams(range);
    q.set('limit', '50');
    if (cursor) q.set('cursor', cursor);
    const page = await api(`${base}/requests?${q}`);
    for (const r of page.requests) {
      rows.push(
        h(
          'tr',
          {},
          h('td', { class: 'num' }, when(r.time)),
          h('td', {}, r.key_name ?? '—', r.key_prefix ? h('span', { class: 'hint block mono' }, `${r.key_prefix}…`) : null),
          h('td', {}, h('span', { class: 'mono' }, r.model ?? '—')),
          h('td', {}, badge(`${r.status ?? ''} ${REASONS[r.refusal_reason]?.name ?? r.refusal_reason}`.trim(), 'danger')),
          h('td', { class: 'num' }, count(r.refused_count)),
          h(
            'td',
            { class: 'request-id' },
            h('span', { class: 'mono ellipsis', title: `The first of these calls: ${r.request_id}` }, r.request_id),
            copyButton(() => r.request_id, 'Copy'),
          ),
        ),
      );
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    fill(body, rows.length ? table('Latest refusals', headers, rows) : h('p', { class: 'empty' }, 'No refusals in this range.'));
  };
  more.addEventListener('click', () => load());
  await load();
  return h(
    'div',
    { class: 'card', id: 'refusal-log' },
    h('h2', {}, 'Latest refusals'),
    h(
      'p',
      { class: 'hint' },
      "Refusals of one key, model and reason within about a second are one row; the request id is the first call's (search the proxy's access log for it).",
    ),
    h(
      'p',
      { class: 'actions' },
      h('a', { href: `${base}/requests?${csv}`, download: '', class: 'button', id: 'csv-refusals' }, 'Download CSV (refusals)'),
    ),
    body,
    more,
  );
}
