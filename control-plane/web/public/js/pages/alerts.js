// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, toast, confirmDialog, copyField, when, badge, busy, usd, moneyPair, table } from '../dom.js';

const EVENT_LABEL = { 'key.budget_crossed': 'Key budget', 'workspace.balance_below': 'Balance below threshold' };
const STATUS_KIND = { delivered: 'ok', retrying: 'danger', pending: '' };

function eventSummary(e) {
  const d = e.data;
  if (e.type === 'key.budget_crossed') {
    const [budget, spend] = moneyPair(d.budget_usd, d.spend_usd);
    return [`${d.key_name} (${d.key_prefix}…) reached ${d.threshold_percent} % of `, budget, ': ', spend, ' spent'];
  }
  const [balance, threshold] = moneyPair(d.balance_usd, d.threshold_usd);
  return ['Balance ', balance, ' fell below ', threshold];
}

/** One delivery: its state, the webhook it went to, its attempts and the last answer. */
function delivery(d) {
  const answer = d.last_error ?? (d.last_status ? `answered ${d.last_status}` : 'no answer yet');
  return [
    badge(d.status, STATUS_KIND[d.status]),
    h('span', { class: 'hint block mono ellipsis', title: d.url }, d.url),
    h('span', { class: 'hint block' }, `${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'} · ${answer}`),
  ];
}

/** Settings → Alerts: the balance threshold, the webhooks, and every alert sent with its delivery status. */
export async function alertsPage(section, s) {
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Money alerts'),
    h(
      'p',
      { class: 'hint' },
      'Webhooks are told when a key’s spend crosses 50 %, 80 % and 100 % of its budget, and when the workspace balance falls below the threshold you set. Each event is signed and retried until your receiver answers 2xx.',
    ),
  );
  if (!s.workspace) {
    section.append(h('p', { class: 'error', role: 'alert' }, s.workspaceError ?? 'This organization has no workspace yet.'));
    return;
  }
  const base = `/v1/workspaces/${enc(s.workspace.id)}/alerts`;
  const error = errorBox();
  const settingsCard = h('div', { class: 'card', id: 'alert-settings' });
  const eventsCard = h('div', { class: 'card', id: 'alert-events' });
  section.append(error.el, settingsCard, eventsCard);

  const drawSettings = (settings) => {
    const threshold = h('input', {
      type: 'number',
      min: '0',
      step: '0.01',
      value: settings.balance_below_usd ?? '',
      placeholder: 'No balance alert',
    });
    const url = h('input', { type: 'url', required: true, placeholder: 'https://hooks.example.com/tollgate', class: 'mono' });
    fill(
      settingsCard,
      h('h2', {}, 'Balance threshold'),
      h(
        'form',
        {
          class: 'inline-form',
          onsubmit: async (e) => {
            e.preventDefault();
            error.clear();
            try {
              const value = threshold.value === '' ? null : Number(threshold.value);
              drawSettings(await busy(settingsCard, () => api(base, { method: 'PUT', body: { balance_below_usd: value } })));
              toast(value === null ? 'Balance alert off.' : `Alert when the balance falls below ${usd(value)}.`);
            } catch (err) {
              error.show(err.message);
            }
          },
        },
        field('Alert when the balance falls below (USD)', threshold),
        h('button', { type: 'submit' }, 'Save threshold'),
      ),
      h('h2', { class: 'spaced' }, 'Webhooks'),
      settings.webhooks.length
        ? h(
            'ul',
            { class: 'plain-list', id: 'alert-webhooks' },
            settings.webhooks.map((w) =>
              h(
                'li',
                {},
                h('span', { class: 'mono' }, w.url),
                h('span', { class: 'hint' }, ` · added ${when(w.created_at)} `),
                h(
                  'button',
                  {
                    type: 'button',
                    onclick: async () => {
                      const ok = await confirmDialog({
                        title: 'Remove this webhook?',
                        message: `${w.url} gets no more alerts, and its pending deliveries are dropped.`,
                        confirmLabel: 'Remove',
                      });
                      if (!ok) return;
                      try {
                        await api(`${base}/webhooks/${enc(w.id)}`, { method: 'DELETE' });
                        drawSettings(await api(base));
                        toast('Webhook removed.');
                      } catch (err) {
                        error.show(err.message);
                      }
                    },
                  },
                  'Remove',
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No webhook yet.'),
      h(
        'form',
        {
          class: 'inline-form',
          onsubmit: async (e) => {
            e.preventDefault();
            error.clear();
            try {
              const created = await busy(settingsCard, () => api(`${base}/webhooks`, { method: 'POST', body: { url: url.value } }));
              drawSettings(await api(base));
              settingsCard.append(
                h(
                  'div',
                  { class: 'notice', id: 'webhook-secret' },
                  h('p', {}, 'Signing secret: shown this once. Verify x-tollgate-signature with it.'),
                  copyField('Signing secret', created.secret, { secret: true }),
                ),
              );
            } catch (err) {
              error.show(err.message);
            }
          },
        },
        field('Webhook URL (https)', url),
        h('button', { type: 'submit', class: 'primary' }, 'Add webhook'),
      ),
    );
  };

  const drawEvents = (events) => {
    const rows = events.flatMap((e) =>
      (e.deliveries.length ? e.deliveries : [null]).map((d) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, when(e.created_at)),
          h('td', {}, EVENT_LABEL[e.type] ?? e.type, h('span', { class: 'hint block mono', title: `Event id ${e.id}` }, `${e.id.slice(0, 8)}…`)),
          h('td', {}, eventSummary(e)),
          // The delivery in one cell (where, how often, what answered), so the table fits a 1280 px window.
          h('td', {}, d ? delivery(d) : 'no webhook'),
        ),
      ),
    );
    fill(
      eventsCard,
      h('h2', {}, 'Alerts sent'),
      rows.length
        ? table('Alert events', ['Time', 'Alert (event id)', 'What happened', 'Delivery'], rows)
        : h('p', { class: 'empty' }, 'No alert yet.'),
    );
  };

  try {
    const [settings, events] = await Promise.all([api(base), api(`${base}/events`)]);
    drawSettings(settings);
    drawEvents(events.events);
  } catch (err) {
    error.show(err.message);
  }
}
