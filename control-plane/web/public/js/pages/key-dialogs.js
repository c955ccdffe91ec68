// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, busy, toast, openDialog, lockDialog, copyField, when } from '../dom.js';

/** The budget periods a key may have, as the select offers them ('' is a lifetime budget). */
const PERIODS = [
  ['', 'In total'],
  ['day', 'Per day'],
  ['week', 'Per week'],
  ['month', 'Per month'],
];

export function periodSelect(value) {
  return h(
    'select',
    { name: 'budget_period' },
    PERIODS.map(([v, label]) => h('option', { value: v, selected: (value ?? '') === v }, label)),
  );
}

/** The date input's value for an instant, in the user's time zone ('' for none). */
function dateValue(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** A number field's value: null when empty (PATCH clears it), NaN when not a positive number. */
function numberOrNull(input, integer) {
  const raw = input.value.trim();
  if (raw === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n)) ? n : NaN;
}

/** What the edit form asks to change, or the problems with it. */
function patchOf(k, inputs) {
  const problems = [];
  const body = {};
  const name = inputs.name.value.trim();
  if (!name) problems.push('Give the key a name.');
  else if (name !== k.name) body.name = name;
  const numbers = { budget_usd: numberOrNull(inputs.budget, false), rpm: numberOrNull(inputs.rpm, true), tpm: numberOrNull(inputs.tpm, true) };
  for (const [f, v] of Object.entries(numbers)) {
    if (Number.isNaN(v))
      problems.push(f === 'budget_usd' ? 'Budget must be a positive amount.' : `${f.toUpperCase()} must be a positive whole number.`);
    else if (v !== k[f]) body[f] = v;
  }
  const period = inputs.period.value || null;
  if (period !== k.budget_period) body.budget_period = period;
  if (period && numbers.budget_usd === null) problems.push('A period needs a budget.');
  const expiry = inputs.expires.value ? new Date(`${inputs.expires.value}T23:59:59`) : null;
  if (expiry && expiry.getTime() <= Date.now()) problems.push('The expiry date must be in the future.');
  else if (dateValue(k.expires_at) !== inputs.expires.value) body.expires_at = expiry && expiry.toISOString();
  return { body, problems };
}

/** The key dialog: name, budget and its period, limits, expiry; saved with PATCH /v1/keys/{id}. */
export function editKeyDialog(k, onDone) {
  openDialog({
    title: `Edit “${k.name}”`,
    body: (close) => {
      const inputs = {
        name: h('input', { name: 'name', required: true, maxlength: 100, value: k.name, autofocus: true }),
        budget: h('input', {
          name: 'budget',
          type: 'number',
          min: '0.01',
          step: '0.01',
          inputmode: 'decimal',
          placeholder: 'No limit',
          value: k.budget_usd ?? '',
        }),
        period: periodSelect(k.budget_period),
        rpm: h('input', { name: 'rpm', type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'No limit', value: k.rpm ?? '' }),
        tpm: h('input', { name: 'tpm', type: 'number', min: '1', step: '1', inputmode: 'numeric', placeholder: 'No limit', value: k.tpm ?? '' }),
        expires: h('input', { name: 'expires', type: 'date', value: dateValue(k.expires_at) }),
      };
      const error = errorBox();
      const form = h(
        'form',
        {
          onsubmit: async (e) => {
            e.preventDefault();
            const { body, problems } = patchOf(k, inputs);
            if (problems.length) return error.show(problems.join(' '));
            error.clear();
            if (!Object.keys(body).length) return close();
            try {
              await busy(form, () => api(`/v1/keys/${enc(k.id)}`, { method: 'PATCH', body }));
              toast(`Key “${body.name ?? k.name}” saved. Every proxy has it within seconds.`);
              close();
              onDone();
            } catch (err) {
              error.show(err.message);
            }
          },
        },
        field('Name', inputs.name),
        h('div', { class: 'grid two' }, field('Budget (USD)', inputs.budget), field('Budget applies', inputs.period)),
        h(
          'p',
          { class: 'hint' },
          'A period budget resets at 00:00 UTC: days, weeks from Monday, calendar months. In total: one budget for the key’s whole life.',
        ),
        h('div', { class: 'grid two' }, field('Requests / minute', inputs.rpm), field('Tokens / minute', inputs.tpm)),
        field('Expires on', inputs.expires, 'Leave empty for a key that does not expire.'),
        error.el,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: close }, 'Cancel'),
          h('button', { type: 'submit', class: 'primary' }, 'Save'),
        ),
      );
      return form;
    },
  });
}

const GRACES = [
  [0, 'Now (no grace)'],
  [3600, 'In 1 hour'],
  [86400, 'In 24 hours'],
  [604800, 'In 7 days'],
];

/** Rotate: a new secret for the same key, shown once, and when the old one stops. */
export function rotateKeyDialog(k, onDone) {
  let rotated = false;
  openDialog({
    title: `Rotate “${k.name}”`,
    onClose: () => {
      if (rotated) onDone();
    },
    body: (close, content) => {
      const grace = h(
        'select',
        { name: 'grace_seconds' },
        GRACES.map(([v, label]) => h('option', { value: String(v), selected: v === 86400 }, label)),
      );
      const error = errorBox();
      const form = h(
        'form',
        {
          onsubmit: async (e) => {
            e.preventDefault();
            try {
              const body = { grace_seconds: Number(grace.value) };
              const res = await busy(form, () => api(`/v1/keys/${enc(k.id)}/rotate`, { method: 'POST', body }));
              rotated = true;
              const done = h('button', { type: 'button', class: 'primary', onclick: close }, 'I have copied it — close');
              fill(
                content,
                h('p', { class: 'warning', role: 'alert' }, 'Copy the new key now. It will not be shown again.'),
                copyField(`New API key “${k.name}”`, res.key, { secret: true }),
                h(
                  'p',
                  { class: 'notice' },
                  `The old key ${k.prefix}…${k.last4} works until ${when(res.previous_expires_at)}, then stops everywhere.`,
                ),
                h('div', { class: 'actions' }, done),
              );
              lockDialog(content);
            } catch (err) {
              error.show(err.message);
            }
          },
        },
        h('p', {}, 'The key keeps its spend, budget, limits and usage history; only its secret changes.'),
        field('The old secret stops', grace),
        error.el,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: close }, 'Cancel'),
          h('button', { type: 'submit', class: 'primary' }, 'Rotate key'),
        ),
      );
      return form;
    },
  });
}
