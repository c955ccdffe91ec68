// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, usd, money, moneyDetail, when, table, badge, copyButton } from '../dom.js';
import { stackedBars, moneyTickFormat } from '../chart.js';
import { REASONS } from './refusals.js';

const DAY_MS = 86_400_000;
/** Groups drawn in their own colour; the rest are summed as "Other". */
const TOP_GROUPS = 5;
/** The wire format each request was made in, as the console names it. */
const FORMAT_NAMES = {
  chat: 'Chat',
  messages: 'Messages',
  responses: 'Responses',
  gemini: 'Gemini',
  embeddings: 'Embeddings',
  compaction: 'Compaction',
};
/** With no range chosen, the page looks this many days back (today included). */
const DEFAULT_DAYS = 7;
/** "Auto" draws hours up to this many days (48 bars at most), days beyond. */
const HOURLY_UP_TO_DAYS = 2;

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

const count = (n) => Number(n ?? 0).toLocaleString('en-US');

/** Every bucket start from `from` to `to` (UTC), so empty days or hours show as gaps, not as nothing. */
function bucketStarts(from, to, granularity) {
  const step = granularity === 'day' ? DAY_MS : DAY_MS / 24;
  const first = Math.floor(new Date(from).getTime() / step) * step;
  const out = [];
  for (let t = first; t < new Date(to).getTime() && out.length < 800; t += step) out.push(new Date(t).toISOString());
  return out;
}

function bucketLabel(iso, granularity) {
  const d = new Date(iso);
  return granularity === 'day' ? iso.slice(5, 10) : `${iso.slice(5, 10)} ${String(d.getUTCHours()).padStart(2, '0')}h`;
}

/** Whole UTC days from `from` to `to`, both inclusive. */
function daysBetween(from, to) {
  return Math.round((new Date(`${to}T00:00:00Z`).getTime() - new Date(`${from}T00:00:00Z`).getTime()) / DAY_MS) + 1;
}

function legend(series) {
  return h(
    'ul',
    { class: 'legend' },
    series.map((s) => h('li', {}, h('span', { class: `swatch ${s.cls}` }), s.name)),
  );
}

const PER = { day: 'today', week: 'this week', month: 'this month' };

/**
 * A key with a period budget: what its present period has spent against the
 * budget, and when the period resets (the range above may span periods, so
 * the range's spend alone cannot say how close the key is to stopping).
 */
function periodLine(g) {
  if (!g.budget_period || g.budget_usd == null) return null;
  return h(
    'span',
    { class: 'hint block period' },
    money(g.period_spend_usd ?? 0),
    ` of `,
    money(g.budget_usd),
    ` ${PER[g.budget_period]}`,
    g.period_resets_at ? ` · resets ${when(g.period_resets_at)}` : '',
  );
}

/** Usage: where the money went, by time, model, team, key and user, and the request log. */
export async function usagePage(section, s, { params, navigate }) {
  fill(section, h('h1', { tabindex: '-1' }, 'Usage'));
  if (!s.workspace) {
    section.append(h('p', { class: 'error', role: 'alert' }, s.workspaceError ?? 'This organization has no workspace yet.'));
    return;
  }
  const base = `/v1/workspaces/${enc(s.workspace.id)}/usage`;
  const today = new Date();
  const state = {
    from: params.get('from') ?? isoDay(new Date(today.getTime() - (DEFAULT_DAYS - 1) * DAY_MS)),
    to: params.get('to') ?? isoDay(today),
    granularity: ['day', 'hour'].includes(params.get('granularity')) ? params.get('granularity') : 'auto',
    group_by: ['model', 'team', 'key', 'user'].includes(params.get('group_by')) ? params.get('group_by') : 'model',
    model: params.get('model') ?? '',
    team_id: params.get('team_id') ?? '',
    errors: params.get('errors') === 'true',
  };
  const [models, teams] = await Promise.all([api('/v1/models').catch(() => []), api(`/v1/workspaces/${enc(s.workspace.id)}/teams`).catch(() => [])]);

  const input = (type, value, attrs = {}) => h('input', { type, value, ...attrs });
  const fromInput = input('date', state.from, { max: isoDay(today) });
  const toInput = input('date', state.to, { max: isoDay(today) });
  const select = (value, options) =>
    h(
      'select',
      {},
      options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)),
    );
  const granularity = select(state.granularity, [
    ['auto', 'Auto'],
    ['day', 'Day'],
    ['hour', 'Hour'],
  ]);
  const groupBy = select(state.group_by, [
    ['model', 'Model'],
    ['team', 'Team'],
    ['key', 'Key'],
    ['user', 'User'],
  ]);
  const model = select(state.model, [['', 'All models'], ...models.map((m) => [m.alias, m.alias])]);
  const team = select(state.team_id, [['', 'All teams'], ...teams.map((t) => [t.id, t.name])]);
  const apply = () => {
    const q = new URLSearchParams({ from: fromInput.value, to: toInput.value, granularity: granularity.value, group_by: groupBy.value });
    if (model.value) q.set('model', model.value);
    if (team.value) q.set('team_id', team.value);
    if (state.errors) q.set('errors', 'true');
    navigate(`#/usage?${q}`);
  };
  for (const control of [fromInput, toInput, granularity, groupBy, model, team]) control.addEventListener('change', apply);
  section.append(
    h(
      'form',
      { class: 'card usage-filters', 'aria-label': 'Usage filters', onsubmit: (e) => (e.preventDefault(), apply()) },
      field('From (UTC)', fromInput),
      field('To (UTC)', toInput),
      field('Per', granularity),
      field('Group by', groupBy),
      field('Model', model),
      field('Team', team),
    ),
  );

  // With no range in the address, start at the first day that has usage in the
  // last DEFAULT_DAYS days: one day of traffic then fills the chart hour by hour
  // instead of being a sliver at its right edge.
  if (!params.has('from') && !params.has('to')) {
    const probe = new URLSearchParams({ from: `${state.from}T00:00:00Z`, granularity: 'day', group_by: 'model' });
    const week = await api(`${base}?${probe}`).catch(() => null);
    const first = week?.buckets.map((b) => b.bucket).sort()[0];
    if (first) state.from = first.slice(0, 10);
    fromInput.value = state.from;
  }
  // Auto: hours up to HOURLY_UP_TO_DAYS days, days beyond.
  const per = state.granularity !== 'auto' ? state.granularity : daysBetween(state.from, state.to) <= HOURLY_UP_TO_DAYS ? 'hour' : 'day';
  // The API's range: whole UTC days, `to` inclusive.
  const query = new URLSearchParams({
    from: `${state.from}T00:00:00Z`,
    to: new Date(new Date(`${state.to}T00:00:00Z`).getTime() + DAY_MS).toISOString(),
  });
  if (state.model) query.set('model', state.model);
  if (state.team_id) query.set('team_id', state.team_id);
  const summaryQuery = new URLSearchParams(query);
  summaryQuery.set('granularity', per);
  summaryQuery.set('group_by', state.group_by);
  const byKeyQuery = new URLSearchParams(query);
  byKeyQuery.set('group_by', 'key');

  let summary;
  let byKey;
  try {
    [summary, byKey] = await Promise.all([api(`${base}?${summaryQuery}`), api(`${base}?${byKeyQuery}`)]);
  } catch (err) {
    section.append(h('p', { class: 'error', role: 'alert' }, err.message));
    return;
  }

  const t = summary.totals;
  section.append(
    h(
      'dl',
      { class: 'usage-totals', id: 'usage-totals' },
      [
        ['Spend', money(t.spend_usd), 'spend'],
        ['Requests', count(t.requests), 'requests'],
        ['Input tokens (uncached)', count(t.input_tokens), 'input'],
        ['Cache tokens read / written', `${count(t.cache_read_tokens)} / ${count(t.cache_write_tokens)}`, 'cache'],
        ['Output tokens', count(t.output_tokens), 'output'],
        // Spend at the full input price minus spend: negative while caches are being written more than read.
        ['Saved by caching', money(t.cache_saved_usd), 'cache-saved'],
        ['Errors', count(t.errors), 'errors'],
        // Calls Tollgate refused (not in Requests): the Refusals page says why.
        ['Refused', h('a', { href: '#/refusals', title: 'Calls Tollgate itself refused: see why' }, count(t.refused)), 'refused'],
      ].map(([label, value, id]) => h('div', {}, h('dt', {}, label), h('dd', { 'data-total': id }, value))),
    ),
  );

  const buckets = bucketStarts(summary.from, summary.to, summary.granularity);
  const top = summary.groups.slice(0, TOP_GROUPS);
  const topIds = new Set(top.map((g) => g.id));
  const series = top.map((g, i) => ({ id: g.id, name: g.label, cls: `c${i}`, values: new Map() }));
  const other = { name: 'Other', cls: 'c5', values: new Map() };
  for (const b of summary.buckets) {
    const target = topIds.has(b.group_id) ? series.find((x) => x.id === b.group_id) : other;
    target.values.set(b.bucket, (target.values.get(b.bucket) ?? 0) + b.spend_usd);
  }
  if (other.values.size) series.push(other);
  const requests = { name: 'Requests', cls: 'requests', values: new Map() };
  const errors = { name: 'Errors', cls: 'errors', values: new Map() };
  for (const b of summary.buckets) {
    requests.values.set(b.bucket, (requests.values.get(b.bucket) ?? 0) + b.requests - b.errors);
    errors.values.set(b.bucket, (errors.values.get(b.bucket) ?? 0) + b.errors);
  }
  const groupName = { model: 'model', team: 'team', key: 'key', user: 'user' }[summary.group_by];
  // Drawn at about the size shown, so labels keep a readable size on a phone as on a desktop.
  const fullWidth = Math.max(300, Math.min(960, section.clientWidth - 40));
  const halfWidth = window.matchMedia('(max-width: 760px)').matches ? fullWidth : Math.max(300, fullWidth / 2 - 24);
  const empty = !summary.buckets.length;
  const label = (b) => bucketLabel(b, summary.granularity);
  section.append(
    h(
      'div',
      { class: 'card', id: 'spend-chart' },
      h('h2', {}, `Spend per ${summary.granularity}, by ${groupName}`),
      empty
        ? h('p', { class: 'empty' }, 'No usage in this range.')
        : [
            stackedBars({
              title: `Spend per ${summary.granularity} by ${groupName}`,
              buckets,
              label,
              series,
              tick: moneyTickFormat,
              exact: usd,
              width: fullWidth,
            }),
            legend(series),
          ],
    ),
    h(
      'div',
      { class: 'grid two' },
      h(
        'div',
        { class: 'card', id: 'requests-chart' },
        h('h2', {}, 'Requests and errors'),
        empty
          ? h('p', { class: 'empty' }, 'No requests in this range.')
          : [
              stackedBars({
                title: `Requests and errors per ${summary.granularity}`,
                buckets,
                label,
                series: [requests, errors],
                tick: () => count,
                exact: count,
                integer: true,
                width: halfWidth,
                height: 200,
              }),
              legend([requests, errors]),
            ],
      ),
      h(
        'div',
        { class: 'card', id: 'top-keys' },
        h('h2', {}, 'Top keys by spend'),
        byKey.groups.length
          ? h(
              'ol',
              { class: 'bar-list' },
              byKey.groups.slice(0, 8).map((g) =>
                h(
                  'li',
                  {},
                  h('span', {}, g.label),
                  h('span', { class: 'num' }, money(g.spend_usd), h('span', { class: 'hint' }, ` · ${count(g.requests)} req`)),
                  h('progress', {
                    max: String(byKey.groups[0].spend_usd || 1),
                    value: String(g.spend_usd),
                    'aria-label': `${g.label}: ${usd(g.spend_usd)}`,
                  }),
                  periodLine(g),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No key has been used in this range.'),
      ),
    ),
  );

  const csvSummary = new URLSearchParams(summaryQuery);
  csvSummary.set('format', 'csv');
  section.append(
    h(
      'p',
      { class: 'actions' },
      h(
        'a',
        { href: `${base}?${csvSummary}`, download: '', class: 'button', id: 'csv-summary' },
        `Download CSV (per ${summary.granularity} and ${groupName})`,
      ),
    ),
  );
  section.append(await requestLog(base, query, state, apply));
}

/** The paged request log, newest first, with an errors-only switch and its own CSV. */
async function requestLog(base, query, state, apply) {
  const logQuery = new URLSearchParams(query);
  if (state.errors) logQuery.set('errors', 'true');
  const csv = new URLSearchParams(logQuery);
  csv.set('format', 'csv');
  const errorsOnly = h('input', {
    type: 'checkbox',
    checked: state.errors,
    onchange: (e) => {
      state.errors = e.target.checked;
      apply();
    },
  });
  const body = h('div');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const rows = [];
  let cursor = null;
  // The wire format rides under the model and the request id is cut with an
  // ellipsis (whole on hover, and a Copy button), so the log fits its card.
  const headers = ['Time', 'Key', 'Model', 'Status', 'Tokens in / out', 'Cost', 'Latency', 'Request id'];
  // Cache figures ride under the tokens and the cost they explain, so the log stays as wide as before.
  const cacheHint = (r) =>
    r.cache_read_tokens || r.cache_write_tokens
      ? h('span', { class: 'hint block' }, `cache ${count(r.cache_read_tokens)} read · ${count(r.cache_write_tokens)} written`)
      : null;
  const savedHint = (r) =>
    r.cache_saved_usd
      ? h('span', { class: 'hint block' }, r.cache_saved_usd > 0 ? 'saved ' : 'cache cost ', money(Math.abs(r.cache_saved_usd)))
      : null;
  // A row of refused calls: Tollgate's reason, and how many calls of that key, model and reason it stands for.
  const refusalHint = (r) =>
    r.refusal_reason
      ? h(
          'span',
          { class: 'hint block' },
          `refused: ${REASONS[r.refusal_reason]?.name ?? r.refusal_reason}`,
          r.refused_count > 1 ? ` ×${count(r.refused_count)}` : '',
        )
      : null;
  const load = async () => {
    const q = new URLSearchParams(logQuery);
    q.set('limit', '50');
    if (cursor) q.set('cursor', cursor);
    const page = await api(`${base}/requests?${q}`);
    for (const r of page.requests) {
      rows.push(
        h(
          'tr',
          {},
          // When the call started; when the ledger recorded it on hover.
          h('td', { class: 'num', title: `Started ${when(r.time)}; recorded ${when(r.settled_at)}` }, when(r.time)),
          h('td', {}, r.key_name ?? '—', r.key_prefix ? h('span', { class: 'hint block mono' }, `${r.key_prefix}…`) : null),
          h('td', {}, h('span', { class: 'mono' }, r.model ?? '—'), h('span', { class: 'hint block' }, FORMAT_NAMES[r.format] ?? '—')),
          h('td', {}, r.status == null ? '—' : badge(String(r.status), r.status >= 400 ? 'danger' : ''), refusalHint(r)),
          h('td', { class: 'num' }, r.refusal_reason ? '—' : `${count(r.input_tokens)} / ${count(r.output_tokens)}`, cacheHint(r)),
          h('td', { class: 'num' }, r.refusal_reason ? '—' : moneyDetail(r.cost_usd), savedHint(r)),
          h('td', { class: 'num' }, r.latency_ms == null ? '—' : `${count(r.latency_ms)} ms`),
          h(
            'td',
            { class: 'request-id' },
            h('span', { class: 'mono ellipsis', title: r.request_id }, r.request_id),
            copyButton(() => r.request_id, 'Copy'),
          ),
        ),
      );
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    fill(body, rows.length ? table('Request log', headers, rows) : h('p', { class: 'empty' }, 'No requests in this range.'));
  };
  more.addEventListener('click', () => load());
  await load();
  return h(
    'div',
    { class: 'card', id: 'request-log' },
    h('h2', {}, 'Request log'),
    h(
      'div',
      { class: 'usage-filters' },
      h('label', { class: 'check' }, errorsOnly, ' Errors only'),
      h('a', { href: `${base}/requests?${csv}`, download: '', class: 'button', id: 'csv-requests' }, 'Download CSV (requests)'),
    ),
    body,
    more,
  );
}
