import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import OpenAI from 'openai';
import { createEntraToken, type EntraSettings } from '../../../../proxy/upstream-auth/entra.js';
import { startFakeUpstream, type FakeUpstream } from '../../../support/fake-upstream/index.js';
import { startFakeEntra, type FakeEntra } from '../../../support/fake-clouds/entra.js';
import { startFakeAzureOpenAi, type FakeAzureOpenAi } from '../../../support/fake-clouds/azure-openai.js';
import { capturedLog } from '../../../support/log-lines.js';

const SETTINGS = { tenant_id_env: 'AOAI_TENANT', client_id_env: 'AOAI_CLIENT', client_secret_env: 'AOAI_SECRET' } as const;

describe('Azure OpenAI tokens from Entra ID', () => {
  let entra: FakeEntra;
  let upstream: FakeUpstream;
  let azure: FakeAzureOpenAi;
  let trusted: string[];

  before(() => {
    trusted = tls.getCACertificates('default');
  });
  beforeEach(async () => {
    entra = await startFakeEntra();
    // The fake login host's certificate, trusted by this process's TLS clients the way an operator's CA bundle would be.
    tls.setDefaultCACertificates([...trusted, entra.cert]);
    upstream = await startFakeUpstream({ formats: 'chat' });
    azure = await startFakeAzureOpenAi({ tokens: entra.tokens, upstream });
  });
  afterEach(async () => {
    tls.setDefaultCACertificates(trusted);
    await Promise.all([entra.close(), upstream.close(), azure.close()]);
  });

  function secretEnv(): NodeJS.ProcessEnv {
    return { AOAI_TENANT: entra.tenantId, AOAI_CLIENT: entra.clientId, AOAI_SECRET: entra.clientSecret };
  }
  function settings(extra: Partial<EntraSettings> = {}): EntraSettings {
    return { ...SETTINGS, authority_url: entra.authorityUrl, ...extra };
  }

  it("gets a client-credentials token from the tenant's login host, fetching only its discovery document and token endpoint", async () => {
    const source = createEntraToken({ provider: 'azure', settings: settings(), env: secretEnv(), log: capturedLog().log });
    const token = await source.token();
    expect(entra.tokens.check(token)).to.equal('ok');
    expect(entra.paths).to.deep.equal([`GET /${entra.tenantId}/v2.0/.well-known/openid-configuration`, `POST /${entra.tenantId}/oauth2/v2.0/token`]);
  });

  it('serves an OpenAI SDK client through tokens that expire mid-run, refreshed before expiry without a failed call', async function () {
    this.timeout(20_000);
    entra.tokens.lifetimeSeconds = 2;
    const source = createEntraToken({ provider: 'azure', settings: settings(), env: secretEnv(), log: capturedLog().log });
    const client = new OpenAI({
      baseURL: azure.baseUrl,
      apiKey: 'unused',
      maxRetries: 0,
      fetch: async (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${await source.token()}`);
        return fetch(url, { ...init, headers });
      },
    });
    const started = Date.now();
    let calls = 0;
    while (Date.now() - started < 5_000) {
      const answer = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0]?.message.content).to.be.a('string');
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(azure.refusedTokens).to.deep.equal([]);
    expect(azure.served).to.equal(calls);
    expect(entra.tokens.count).to.be.at.least(3, 'a token of 2 s serves 5 s of calls only if refreshed');
  });

  it('takes a federated token file for workload identity when no secret is named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-entra-'));
    try {
      writeFileSync(join(dir, 'token'), entra.federatedToken);
      const env = { AOAI_TENANT: entra.tenantId, AOAI_CLIENT: entra.clientId, AZURE_FEDERATED_TOKEN_FILE: join(dir, 'token') };
      const source = createEntraToken({ provider: 'azure', settings: settings({ client_secret_env: undefined }), env, log: capturedLog().log });
      expect(entra.tokens.check(await source.token())).to.equal('ok');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every variable that is not set, as a 503 for the provider, without asking Entra', async () => {
    const source = createEntraToken({ provider: 'azure-east', settings: settings(), env: { AOAI_CLIENT: entra.clientId }, log: capturedLog().log });
    const err = (await source.token().catch((e: unknown) => e)) as { status: number; message: string };
    expect(err.status).to.equal(503);
    expect(err.message).to.equal('Provider "azure-east" has no usable credentials: AOAI_TENANT, AOAI_SECRET are not set.');
    expect(entra.paths).to.deep.equal([]);
  });

  it('says what to set when neither a secret, a certificate nor a federated token is given', async () => {
    const env = { AOAI_TENANT: entra.tenantId, AOAI_CLIENT: entra.clientId };
    const source = createEntraToken({ provider: 'azure', settings: settings({ client_secret_env: undefined }), env, log: capturedLog().log });
    const err = (await source.token().catch((e: unknown) => e)) as { status: number; message: string };
    expect(err.message).to.equal(
      'Provider "azure" has no usable credentials: azure_ad names no client_secret_env, and neither AZURE_CLIENT_CERTIFICATE_PATH nor AZURE_FEDERATED_TOKEN_FILE is set.',
    );
  });

  it("is refused for a wrong secret, logged with Entra's reason and never the secret", async () => {
    const captured = capturedLog();
    const env = { ...secretEnv(), AOAI_SECRET: 'wrong~secret-value' };
    const source = createEntraToken({ provider: 'azure', settings: settings(), env, log: captured.log });
    const err = (await source.token().catch((e: unknown) => e)) as { status: number; message: string };
    expect(err.status).to.equal(503);
    expect(err.message).to.equal('Provider "azure" has no usable credentials: the token request failed.');
    expect(entra.refusals).to.deep.equal(['invalid_client 7000215']);
    expect(captured.text()).to.include('AADSTS7000215');
    expect(captured.text()).not.to.include('wrong~secret-value');
  });
});
