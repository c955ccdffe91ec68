// @ts-check
import { api } from '../api.js';
import { h, field, errorBox, busy } from '../dom.js';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Two ways in: the organization's SSO (the control plane redirects to the
 * identity provider and back, then sets the session cookie), or a console
 * token, which is exchanged once for the session cookie and then forgotten.
 */
export function signInPage({ message, onSignedIn }) {
  const lines = Array.isArray(message) ? message : message ? [message] : [];
  const notice = lines.length
    ? h(
        'div',
        { class: 'notice', role: 'status' },
        h('p', {}, lines[0]),
        lines.slice(1).map((l) => h('p', { class: 'hint' }, l)),
      )
    : null;

  const slug = h('input', {
    name: 'org',
    autocomplete: 'organization',
    required: true,
    spellcheck: 'false',
    placeholder: 'acme',
    autocapitalize: 'none',
  });
  const ssoError = errorBox();
  const ssoForm = h(
    'form',
    {
      class: 'card',
      novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        const value = slug.value.trim().toLowerCase();
        if (!SLUG.test(value)) {
          ssoError.show('Enter your organization’s slug: lowercase letters, digits and dashes, as in the sign-in link your admin gave you.');
          slug.focus();
          return;
        }
        ssoError.clear();
        // A navigation, not fetch: the identity provider takes over the page.
        location.assign(`/v1/auth/sso/${encodeURIComponent(value)}/login`);
      },
    },
    h('h2', {}, 'Sign in with SSO'),
    field('Organization', slug, 'Your organization’s slug, e.g. “acme”. You will continue at your identity provider.'),
    ssoError.el,
    h('button', { type: 'submit', class: 'primary' }, 'Continue with SSO'),
  );

  const token = h('input', { name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', placeholder: 'tgs_…' });
  const tokenError = errorBox();
  const tokenForm = h(
    'form',
    {
      class: 'card',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        const value = token.value.trim();
        if (!value) {
          tokenError.show('Paste the console token printed by the bootstrap command.');
          token.focus();
          return;
        }
        tokenError.clear();
        try {
          await busy(tokenForm, () => api('/v1/auth/session', { method: 'POST', body: { token: value }, quiet: true }));
          token.value = '';
          await onSignedIn();
        } catch (err) {
          tokenError.show(err.message);
          token.focus();
        }
      },
    },
    h('h2', {}, 'Sign in with a console token'),
    field(
      'Console token',
      token,
      'The console_token from “npm run cli -- bootstrap”. It is exchanged for a browser session and not stored by this page.',
    ),
    tokenError.el,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );

  return h(
    'main',
    { id: 'main', class: 'signin' },
    h('div', { class: 'signin-brand' }, h('img', { src: '/favicon.svg', alt: '', width: 36, height: 36 }), h('span', {}, 'Tollgate')),
    h('h1', {}, 'Sign in to the console'),
    notice,
    h('div', { class: 'signin-forms' }, ssoForm, tokenForm),
  );
}
