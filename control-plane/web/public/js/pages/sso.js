// @ts-check
import { api, enc } from '../api.js';
import { h, fill, field, errorBox, busy, toast, copyField } from '../dom.js';
import { claudeCodeSigninCard } from './claude-code-signin.js';

/** The public base URL, as the SCIM settings name it ({base_url}/v1/scim/v2/orgs/<id>). */
async function publicBaseUrl(s) {
  try {
    const scim = await api(`/v1/orgs/${enc(s.orgId)}/scim`);
    const cut = scim.base_url.indexOf('/v1/scim/');
    if (cut > 0) return scim.base_url.slice(0, cut);
  } catch {
    // Fall back to where this page was served from.
  }
  return location.origin;
}

/** Settings → SSO: the organization's OpenID Connect identity provider. */
export async function ssoPage(section, s) {
  const [current, base, signin] = await Promise.all([
    api(`/v1/orgs/${enc(s.orgId)}/sso`).catch((err) => {
      if (err.status === 404) return null;
      throw err;
    }),
    publicBaseUrl(s),
    claudeCodeSigninCard(s),
  ]);
  const issuer = h('input', {
    name: 'issuer',
    type: 'url',
    required: true,
    value: current?.issuer ?? '',
    placeholder: 'https://login.example.com',
    spellcheck: 'false',
  });
  const clientId = h('input', { name: 'client_id', required: true, value: current?.client_id ?? '', spellcheck: 'false', autocomplete: 'off' });
  const clientSecret = h('input', { name: 'client_secret', type: 'password', required: true, autocomplete: 'new-password' });
  const claim = h('input', { name: 'external_id_claim', value: current?.external_id_claim ?? 'sub', spellcheck: 'false' });
  const error = errorBox();
  const form = h(
    'form',
    {
      class: 'card form',
      onsubmit: async (e) => {
        e.preventDefault();
        const missing = [
          [issuer, 'the issuer URL'],
          [clientId, 'the client ID'],
          [clientSecret, 'the client secret'],
        ].filter(([input]) => !input.value.trim());
        if (missing.length) {
          error.show(`Enter ${missing.map(([, what]) => what).join(', ')}.`);
          missing[0][0].focus();
          return;
        }
        error.clear();
        try {
          await busy(form, () =>
            api(`/v1/orgs/${enc(s.orgId)}/sso`, {
              method: 'PUT',
              body: {
                issuer: issuer.value.trim(),
                client_id: clientId.value.trim(),
                client_secret: clientSecret.value,
                external_id_claim: claim.value.trim() || 'sub',
              },
            }),
          );
          clientSecret.value = '';
          toast('SSO settings saved.');
        } catch (err) {
          error.show(err.message);
        }
      },
    },
    h('h2', {}, current ? 'Identity provider' : 'Connect an identity provider'),
    field('Issuer URL', issuer, 'The OpenID Connect issuer; its /.well-known/openid-configuration must be reachable from this server.'),
    field('Client ID', clientId),
    field(
      'Client secret',
      clientSecret,
      current ? 'Stored sealed and never shown. Enter it again to save any change.' : 'Stored sealed and never shown again.',
    ),
    field('External ID claim', claim, 'The ID-token claim that matches the SCIM externalId of your users (usually “sub”).'),
    error.el,
    h('button', { type: 'submit', class: 'primary' }, 'Save SSO settings'),
  );
  fill(
    section,
    h('h1', { tabindex: '-1' }, 'Single sign-on'),
    h(
      'p',
      { class: 'hint' },
      'Members sign in through your identity provider. Without SCIM, a member is created on their first sign-in, with the member role.',
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Register this console at the identity provider'),
      h('p', { class: 'hint' }, 'Create an OpenID Connect web application (authorization code flow) with this redirect URI:'),
      copyField('Redirect URI', `${base}/v1/auth/sso/callback`),
    ),
    form,
    signin,
  );
}
