// @ts-check
// Small DOM helpers. Every piece of data reaches the page through text
// nodes or properties, never through innerHTML, so API data cannot inject markup.

/**
 * h('button', { class: 'primary', onclick: fn }, 'Save') → HTMLButtonElement.
 * Attributes starting with "on" become listeners; `false`/`null` attributes are skipped.
 */
/**
 * @typedef {Node | string | number | boolean | null | undefined | any[]} Children
 *   What h() and fill() accept as content: nodes, text, nothing, or lists of those.
 * @typedef {Record<string, unknown>} Attrs
 */
/**
 * @param {string} tag
 * @param {Attrs} [attrs]
 * @param {...Children} children
 * @returns {any} the element (typed loosely so pages can use the properties of the tag they made)
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'value' || name === 'checked' || name === 'selected') el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let idCounter = 0;
export function uid(prefix = 'id') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** A labelled form field; `input` is any control element. */
export function field(label, input, hint) {
  if (!input.id) input.id = uid('f');
  const hintEl = hint ? h('p', { class: 'hint', id: `${input.id}-hint` }, hint) : null;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, hintEl);
}

/** An error box that screen readers announce; empty until `show` is called. */
export function errorBox() {
  const el = h('div', { class: 'error', role: 'alert', hidden: true });
  return {
    el,
    show(message) {
      el.textContent = message;
      el.hidden = false;
    },
    clear() {
      el.textContent = '';
      el.hidden = true;
    },
  };
}

const live = () => document.getElementById('toast');

/** @type {ReturnType<typeof setTimeout> | undefined} */
let toastTimer;

/**
 * A short success message, announced politely.
 * @param {string} message
 */
export function toast(message) {
  const el = live();
  if (!el) return;
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 5000);
}

async function writeClipboard(text, source) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard permission (e.g. plain http on a remote host): select the
    // text so the user can press Ctrl+C, and try the legacy command.
    if (source && 'select' in source) {
      source.focus();
      source.select();
      return document.execCommand && document.execCommand('copy');
    }
    return false;
  }
}

/** A "Copy" button for `getText()`; `source` is the field to select as a fallback. */
export function copyButton(getText, label = 'Copy', source) {
  const button = h('button', { type: 'button', class: 'copy' }, label);
  button.addEventListener('click', async () => {
    const ok = await writeClipboard(getText(), source);
    button.textContent = ok ? 'Copied' : 'Press Ctrl+C';
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
  return button;
}

/** A read-only value with a copy button, e.g. a URL or a one-time secret. */
export function copyField(label, value, { secret = false } = {}) {
  const input = h('input', { type: 'text', readonly: true, value, class: secret ? 'mono secret' : 'mono', spellcheck: 'false', autocomplete: 'off' });
  input.addEventListener('focus', () => input.select());
  const id = uid('c');
  input.id = id;
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h(
      'div',
      { class: 'copy-row' },
      input,
      copyButton(() => input.value, 'Copy', input),
    ),
  );
}

/** A code block with a copy button. */
export function codeBlock(label, code) {
  const pre = h('pre', { tabindex: '0', 'aria-label': label }, h('code', {}, code));
  return h(
    'div',
    { class: 'code-block' },
    h(
      'div',
      { class: 'code-head' },
      h('span', {}, label),
      copyButton(() => code, 'Copy'),
    ),
    pre,
  );
}

/**
 * A modal dialog. The native <dialog> traps focus and closes on Escape; the
 * opener gets focus back, and the dialog leaves the DOM on close so anything
 * secret shown in it is gone.
 */
/**
 * @param {{
 *   title: string,
 *   body: Children | ((close: () => void, content: HTMLElement) => Children),
 *   onClose?: () => void,
 * }} options
 * @returns {{ dialog: HTMLDialogElement, close: () => void, content: HTMLElement }}
 */
export function openDialog({ title, body, onClose }) {
  const opener = document.activeElement;
  const titleId = uid('dlg');
  const content = h('div', { class: 'dialog-body' });
  const dialog = /** @type {HTMLDialogElement} */ (h('dialog', { 'aria-labelledby': titleId }, h('h2', { id: titleId }, title), content));
  const close = () => dialog.close();
  // While a one-time secret is on screen, only its own button closes the
  // dialog: a stray Escape must not throw the secret away.
  dialog.addEventListener('cancel', (e) => {
    if (dialog.dataset.locked) e.preventDefault();
  });
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (onClose) onClose();
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    else /** @type {HTMLElement | null} */ (document.querySelector('main h1'))?.focus();
  });
  document.body.append(dialog);
  fill(content, typeof body === 'function' ? body(close, content) : body);
  dialog.showModal();
  const first = dialog.querySelector('[autofocus], input:not([type=hidden]):not([disabled]), select, textarea, button:not([disabled])');
  if (first instanceof HTMLElement) first.focus();
  return { dialog, close, content };
}

/** Keeps the dialog holding `el` open until its own close button is used. */
export function lockDialog(el) {
  const dialog = el.closest('dialog');
  if (dialog) dialog.dataset.locked = 'true';
}

/** Asks for confirmation; resolves true only when the user confirms. */
export function confirmDialog({ title, message, confirmLabel, danger = true }) {
  return new Promise((resolve) => {
    let confirmed = false;
    openDialog({
      title,
      onClose: () => resolve(confirmed),
      body: (close) => [
        (Array.isArray(message) ? message : [message]).map((m) => h('p', {}, m)),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: close, autofocus: true }, 'Cancel'),
          h(
            'button',
            {
              type: 'button',
              class: danger ? 'danger' : 'primary',
              onclick: () => {
                confirmed = true;
                close();
              },
            },
            confirmLabel,
          ),
        ),
      ],
    });
  });
}

/** Disables a form's controls while `work` runs. */
export async function busy(form, work) {
  const controls = [...form.querySelectorAll('button, input, select, textarea')].filter((c) => !c.disabled);
  controls.forEach((c) => (c.disabled = true));
  try {
    return await work();
  } finally {
    controls.forEach((c) => (c.disabled = false));
  }
}

/**
 * Money, the same way on every page: at least cents, and up to six decimals
 * (the micro-dollars the proxy bills in), so $19.9974 left after spending
 * $0.0026 reads as such and a $0.000033 call is not "$0.00". Amounts under a
 * micro-dollar say so rather than round to zero.
 */
export function usd(value) {
  const n = Number(value ?? 0);
  if (n !== 0 && Math.abs(n) < 0.000001) return `${n < 0 ? '-' : ''}<$0.000001`;
  return n.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
}

/** An amount under a cent in micro-dollars too ("$0.000123 (123 µ$)"): the unit holds and prices count in. */
function exactTitle(n) {
  if (n === 0 || Math.abs(n) >= 0.01) return usd(n);
  const micros = Math.round(n * 1e9) / 1e3;
  return `${usd(n)} (${micros.toLocaleString('en-US', { maximumFractionDigits: 3 })} µ$)`;
}

/** A headline amount: cents, the exact figure on hover (a balance of $69.934188 reads as $69.93). */
export function usdCents(value) {
  const n = Number(value ?? 0);
  // A spend of a few micro-dollars is not nothing: it reads "<$0.01", not "$0.00".
  const text =
    n > 0 && n < 0.005
      ? '<$0.01'
      : n.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return { text, title: exactTitle(n) };
}

/** Money as shown in tables and lists: cents, with the exact figure on hover (`title`). */
export function money(value) {
  const shown = usdCents(value);
  return h('span', { class: 'money', title: `Exactly ${shown.title}` }, shown.text);
}

/**
 * Money in a detail view (one request's cost): cents, but an amount under a
 * cent shows its exact figure rather than "<$0.01" (the micro-dollars on hover).
 */
export function moneyDetail(value) {
  const n = Number(value ?? 0);
  if (n === 0 || Math.abs(n) >= 0.005) return money(n);
  return h('span', { class: 'money', title: `Exactly ${exactTitle(n)}` }, usd(n));
}

/**
 * Two amounts a sentence compares ("balance $19.994 fell below $19.995"):
 * in cents, unless cents would make them read the same while they differ;
 * then both as exact figures, so the sentence never contradicts itself.
 */
export function moneyPair(a, b) {
  const x = Number(a ?? 0);
  const y = Number(b ?? 0);
  if (x === y || usdCents(x).text !== usdCents(y).text) return [money(x), money(y)];
  const exact = (n) => h('span', { class: 'money', title: `Exactly ${exactTitle(n)}` }, usd(n));
  return [exact(x), exact(y)];
}

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind}`.trim() }, text);
}

/** A table wrapped for horizontal scrolling on narrow screens. */
export function table(caption, headers, rows) {
  // On a phone each row becomes a card; the labels come from the headers.
  for (const row of rows) [...row.children].forEach((cell, i) => headers[i] && cell.setAttribute('data-label', headers[i]));
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}
