// @ts-check
import { api, enc } from '../api.js';
import { h, fill, errorBox, toast, confirmDialog, openDialog, lockDialog, copyField, when, badge, busy } from '../dom.js';

/** Settings → SCIM: enable, the base URL, and the one provisioning token. */
export async function scimPage(section, s) {
  const error = errorBox();
  const card = h('div', { class: 'card' });
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'SCIM provisioning'),
    h(
      'p',
      { class: 'hint' },
      'Let your identity provider (Okta, Microsoft Entra ID, OneLogin, …) create, update and deactivate members ahead of their first sign-in. SSO works without it.',
    ),
    error.el,
    card,
    setupSteps(),
  );
  const settings = await api(`/v1/orgs/${enc(s.orgId)}/scim`);
  draw(card, settings, s, error);
}

function draw(card, settings, s, error) {
  const base = `/v1/orgs/${enc(s.orgId)}/scim`;
  const reload = (next) => draw(card, next, s, error);

  const toggle = h(
    'button',
    {
      type: 'button',
      class: settings.enabled ? '' : 'primary',
      onclick: async () => {
        if (settings.enabled) {
          const ok = await confirmDialog({
            title: 'Disable SCIM?',
            message: 'The identity provider’s requests will be refused (401) until you enable SCIM again. Existing members are not changed.',
            confirmLabel: 'Disable SCIM',
          });
          if (!ok) return;
        }
        error.clear();
        try {
          const next = await busy(card, () => api(base, { method: 'PUT', body: { enabled: !settings.enabled } }));
          toast(next.enabled ? 'SCIM enabled.' : 'SCIM disabled.');
          reload(next);
          card.querySelector('button')?.focus();
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    settings.enabled ? 'Disable SCIM' : 'Enable SCIM',
  );

  const tokenPart = settings.token
    ? [
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'Active token'),
          h('dd', { class: 'mono', id: 'scim-token-prefix' }, `${settings.token.prefix}…`),
          h('dt', {}, 'Generated'),
          h('dd', {}, h('time', { datetime: settings.token.created_at }, when(settings.token.created_at))),
        ),
        h('button', { type: 'button', onclick: () => generate(true) }, 'Regenerate token'),
      ]
    : [
        h('p', { class: 'empty' }, 'No token yet. Generate one and enter it in your identity provider.'),
        h('button', { type: 'button', class: 'primary', onclick: () => generate(false) }, 'Generate token'),
      ];

  async function generate(replacing) {
    if (replacing) {
      const ok = await confirmDialog({
        title: 'Regenerate the SCIM token?',
        message: [
          'The current token stops working immediately.',
          'Your identity provider stops syncing users until you enter the new token in its SCIM connector.',
        ],
        confirmLabel: 'Regenerate token',
      });
      if (!ok) return;
    }
    error.clear();
    try {
      const created = await api(`${base}/token`, { method: 'POST' });
      reload({ ...settings, token: { prefix: created.prefix, created_at: created.created_at } });
      showToken(created.token);
    } catch (err) {
      error.show(err.message);
    }
  }

  fill(
    card,
    h(
      'div',
      { class: 'row-between' },
      h('h2', {}, 'Status ', badge(settings.enabled ? 'enabled' : 'disabled', settings.enabled ? 'ok' : 'off')),
      toggle,
    ),
    copyField('SCIM base URL', settings.base_url),
    h('h3', {}, 'Provisioning token'),
    h('p', { class: 'hint' }, 'One token per organization. Only its prefix is kept here; the full token is shown once, when generated.'),
    tokenPart,
    settings.enabled
      ? null
      : h('p', { class: 'hint warn' }, 'SCIM is disabled: the identity provider’s requests are refused even with a valid token.'),
  );
}

function showToken(token) {
  const { content } = openDialog({
    title: 'Your new SCIM token',
    body: (close) => [
      h('p', { class: 'warning', role: 'alert' }, 'Copy this token now. It will not be shown again.'),
      copyField('SCIM bearer token', token, { secret: true }),
      h('p', { class: 'hint' }, 'Paste it into your identity provider’s SCIM connector as the bearer token (HTTP header / OAuth bearer token).'),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', onclick: close }, 'I have copied it — close')),
    ],
  });
  lockDialog(content);
}

function setupSteps() {
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Connect your identity provider'),
    h(
      'ol',
      { class: 'steps' },
      h('li', {}, 'Enable SCIM above and generate a token.'),
      h('li', {}, 'In the identity provider, create a SCIM 2.0 connector with the SCIM base URL above.'),
      h('li', {}, 'Authentication: bearer token (HTTP header / OAuth bearer token) — paste the token.'),
      h('li', {}, 'Unique identifier for users: ', h('code', {}, 'userName'), '.'),
      h('li', {}, 'Enable: create users, update user attributes, deactivate users. Groups are not supported; roles are set here under Members.'),
    ),
  );
}
