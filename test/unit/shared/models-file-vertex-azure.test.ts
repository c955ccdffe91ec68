import { expect } from 'chai';
import { parseModelCatalog } from '../../../shared/models.js';

/** Providers that sign in to their cloud: what their models-file entries must and must not hold. */
type Json = Record<string, unknown>;
const model = {
  alias: 'tg/x',
  provider: 'p',
  upstream_model: 'claude-sonnet-4-5@20250929',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 100,
};
const parse = (provider: Json) => parseModelCatalog({ alias_prefix: 'tg', providers: { p: provider }, models: [model] }, {});
const AZURE_AD = { tenant_id_env: 'T', client_id_env: 'C', client_secret_env: 'S' };
const AZURE_CHAT = { endpoints: { chat_completions: { base_url: 'https://acme.openai.azure.com/openai/v1', auth_header: 'authorization' } } };

describe('models file: cloud providers', () => {
  it("gives a vertex provider its project's Messages (Anthropic's) and Gemini (Google's) endpoints, on the location's host or endpoint_url, with no key", () => {
    const regional = parse({ kind: 'vertex', project: 'acme-ml-prod', location: 'us-east5' });
    expect(regional.problems).to.deep.equal([]);
    const p = regional.catalog!.providers.get('p')!;
    expect(p.endpoints).to.deep.equal({
      messages: {
        base_url: 'https://us-east5-aiplatform.googleapis.com/v1/projects/acme-ml-prod/locations/us-east5/publishers/anthropic/models',
        auth_header: 'authorization',
      },
      gemini: {
        base_url: 'https://us-east5-aiplatform.googleapis.com/v1/projects/acme-ml-prod/locations/us-east5/publishers/google/models',
        auth_header: 'authorization',
      },
    });
    expect(p.vertex).to.deep.equal({ project: 'acme-ml-prod', location: 'us-east5' });
    const global = parse({ kind: 'vertex', project: 'acme-ml-prod', location: 'global', endpoint_url: 'http://127.0.0.1:9/' });
    expect(global.catalog!.providers.get('p')!.endpoints.messages!.base_url).to.equal(
      'http://127.0.0.1:9/v1/projects/acme-ml-prod/locations/global/publishers/anthropic/models',
    );
  });

  it('names what a vertex provider lacks or must not have, all at once', () => {
    const found = parse({ kind: 'vertex', api_key_env: 'K', azure_ad: AZURE_AD });
    expect(found.problems.join('\n')).to.include('a vertex provider needs project');
    expect(found.problems.join('\n')).to.include('a vertex provider needs location');
    expect(found.problems.join('\n')).to.include('a vertex provider signs in with Application Default Credentials, not a key');
    expect(found.problems.join('\n')).to.include('a vertex provider cannot use azure_ad');
  });

  it('takes azure_ad instead of api_key_env, not both and not neither, and authority_url only with it and only https', () => {
    expect(parse({ ...AZURE_CHAT, azure_ad: AZURE_AD, authority_url: 'https://login.microsoftonline.us' }).problems).to.deep.equal([]);
    expect(parse({ ...AZURE_CHAT, azure_ad: AZURE_AD, api_key_env: 'K' }).problems.join('\n')).to.include('give azure_ad or api_key_env, not both');
    expect(parse({ ...AZURE_CHAT }).problems.join('\n')).to.include('a provider needs api_key_env (or azure_ad, or "kind": "vertex")');
    expect(parse({ ...AZURE_CHAT, api_key_env: 'K', authority_url: 'https://login.microsoftonline.us' }).problems.join('\n')).to.include(
      'authority_url is for azure_ad',
    );
    expect(parse({ ...AZURE_CHAT, azure_ad: AZURE_AD, authority_url: 'http://login.example' }).problems).to.have.length(1);
  });

  it('holds variable names in azure_ad, never values', () => {
    const found = parse({ ...AZURE_CHAT, azure_ad: { tenant_id_env: 'T', client_id_env: 'C', client_secret_env: 'abc~secret/value=' } });
    expect(found.problems.join('\n')).to.include('an environment variable name');
  });
});
