// @ts-check
import { api } from '../api.js';
import { h, fill, table, badge, usd } from '../dom.js';

/** How each state a proxy reports reads on the page, and its badge's colour. */
const STATES = {
  healthy: ['Healthy', 'ok'],
  cooling: ['Cooling down', 'warn'],
  open: ['Circuit open', 'danger'],
  half_open: ['Half-open', 'warn'],
  unknown: ['Unknown', 'off'],
};

/** "06:31:05 (in 25 s)": a time soon, and how far off it is. */
function soon(iso) {
  const at = new Date(iso);
  const s = Math.max(0, Math.round((at.getTime() - Date.now()) / 1000));
  const left = s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
  return `${at.toLocaleTimeString(undefined, { timeStyle: 'medium' })} (in ${left})`;
}

/** What the state means for the next calls, in words. */
function detail(d, reporting) {
  const parts = [];
  if (d.state === 'cooling') parts.push(`The provider asked to wait: back in rotation at ${soon(d.back_at)}.`);
  if (d.state === 'open') parts.push(`Skipped without a try; one probe call at ${soon(d.back_at)}.`);
  if (d.state === 'half_open') parts.push('The next call probes it: a success closes the circuit, a failure opens it again.');
  if (d.state === 'unknown') parts.push('No proxy has reported lately.');
  if (d.failures) parts.push(`${d.failures} failure${d.failures === 1 ? '' : 's'} in a row.`);
  if (d.state !== 'healthy' && d.state !== 'unknown' && d.proxies < reporting) parts.push(`At ${d.proxies} of ${reporting} proxies.`);
  return parts.length ? parts.join(' ') : 'In rotation.';
}

/** One deployment: its state, its name and weight, and what the state means when it is not plainly healthy. */
function deploymentItem(m, d, reporting) {
  const [label, kind] = STATES[d.state];
  const weight = d.weight === null ? null : h('span', { class: 'muted', title: 'Weight: its share of the calls' }, ` ×${d.weight}`);
  const quiet = d.state === 'healthy' && !d.failures;
  return h(
    'li',
    { 'data-deployment': `${m.alias} ${d.id}` },
    badge(label, `${kind} state`),
    ' ',
    h('span', { class: 'mono' }, d.id),
    weight,
    quiet ? null : h('div', { class: 'hint' }, detail(d, reporting)),
  );
}

/** "All 31 deployments are in rotation", or which are not: what an operator looks for first. */
function summary(models, reporting) {
  if (!reporting)
    return h('p', { class: 'warning', role: 'status' }, 'No proxy has reported in the last 35 seconds, so the state of each deployment is unknown.');
  const all = models.flatMap((m) => m.deployments.map((d) => ({ alias: m.alias, d })));
  const out = all.filter(({ d }) => d.state !== 'healthy');
  // Good news reads as such: green, not the amber of a warning.
  if (!out.length) return h('p', { class: 'healthy', role: 'status' }, `All ${all.length} deployments are in rotation.`);
  return h(
    'p',
    { class: 'warning', role: 'status' },
    `${out.length} of ${all.length} deployments ${out.length === 1 ? 'is' : 'are'} out of rotation or being probed: `,
    out.map(({ alias, d }, i) => [i ? ', ' : '', h('span', { class: 'mono' }, d.id), ` (${alias}, ${STATES[d.state][0].toLowerCase()})`]),
    '.',
  );
}

/** Owners and admins: every alias with its prices, fallbacks and deployments, and the state the proxies report for each. */
async function deploymentsCard() {
  const card = h('div', { class: 'card', id: 'model-deployments' });
  const load = async () => {
    const [models, v] = await Promise.all([api('/v1/models'), api('/v1/models/deployments')]);
    const prices = new Map(models.map((m) => [m.alias, m]));
    const reporting = v.reports.length;
    const newest = v.reports.reduce((a, r) => (r.reported_at > a ? r.reported_at : a), '');
    const rows = v.models.map((m) => {
      const p = prices.get(m.alias);
      return h(
        'tr',
        { 'data-model': m.alias },
        // One block per cell: on a phone the cell is a row of its label and this.
        h(
          'td',
          {},
          h(
            'div',
            {},
            h('span', { class: 'mono' }, m.alias),
            m.fallbacks.length ? h('div', { class: 'hint' }, 'then ', m.fallbacks.join(', ')) : null,
          ),
        ),
        h('td', { class: 'num' }, p ? `${usd(p.input_usd_per_mtok)} / ${usd(p.output_usd_per_mtok)}` : '—'),
        h(
          'td',
          {},
          h(
            'div',
            {},
            m.deployments.length > 1 ? h('div', { class: 'hint' }, m.deployments[0].weight === null ? 'In this order:' : 'Spread by weight:') : null,
            h(
              'ul',
              { class: 'deployments' },
              m.deployments.map((d) => deploymentItem(m, d, reporting)),
            ),
          ),
        ),
      );
    });
    const age = Math.max(0, Math.round((Date.now() - Date.parse(newest)) / 1000));
    fill(
      card,
      h('h2', {}, 'Models and deployments'),
      summary(v.models, reporting),
      reporting
        ? h(
            'p',
            { class: 'hint' },
            `As ${reporting === 1 ? 'the proxy reports' : `${reporting} proxies report`} it, the latest ${age} s ago (each reports every 10 s).`,
          )
        : null,
      table('Models, prices and deployments', ['Model', 'Price in / out', 'Deployments'], rows),
      h('p', { class: 'actions' }, h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
    );
  };
  await load();
  return card;
}

/** Members: every alias with its prices. */
async function pricesCard() {
  const models = await api('/v1/models');
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Prices'),
    table(
      'Models and prices',
      ['Model', 'Input', 'Output'],
      models.map((m) =>
        h(
          'tr',
          {},
          h('td', { class: 'mono' }, m.alias),
          h('td', { class: 'num' }, usd(m.input_usd_per_mtok)),
          h('td', { class: 'num' }, usd(m.output_usd_per_mtok)),
        ),
      ),
    ),
  );
}

/** Models: every alias with its prices; for owners and admins, where each is served and whether it is in rotation. */
export async function modelsPage(section, s) {
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Models'),
    h('p', { class: 'hint' }, 'The model aliases of this Tollgate and their prices per million tokens. A team calls only the aliases it is granted.'),
  );
  section.append(await (s.isAdmin ? deploymentsCard() : pricesCard()));
}
