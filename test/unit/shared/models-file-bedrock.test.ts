import { expect } from 'chai';
import { parseModelCatalog } from '../../../shared/models.js';

type Json = Record<string, unknown>;
const model = (provider: string): Json => ({
  alias: `tg/${provider}`,
  provider,
  upstream_model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 64000,
});
const file = (providers: Json): Json => ({ alias_prefix: 'tg', providers, models: Object.keys(providers).map(model) });

describe('models file: an Amazon Bedrock provider', () => {
  it('is reached at its region’s host, or endpoint_url, or AWS_ENDPOINT_URL_BEDROCK_RUNTIME, and needs no key variable', () => {
    const { catalog, problems } = parseModelCatalog(
      file({
        plain: { kind: 'bedrock', region: 'eu-central-1' },
        vpc: { kind: 'bedrock', region: 'us-east-1', endpoint_url: 'https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com' },
        keyed: { kind: 'bedrock', region: 'us-west-2', api_key_env: 'BEDROCK_KEY' },
      }),
      { BEDROCK_KEY: 'ABSK', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: undefined },
    );
    expect(problems).to.deep.equal([]);
    const p = catalog!.providers;
    expect(p.get('plain')).to.deep.include({ bedrock: { region: 'eu-central-1' }, api_key: undefined });
    expect(p.get('plain')!.endpoints.messages!.base_url).to.equal('https://bedrock-runtime.eu-central-1.amazonaws.com');
    expect(p.get('vpc')!.endpoints.messages!.base_url).to.equal('https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com');
    expect(p.get('keyed')!.api_key).to.equal('ABSK');
    const fromEnv = parseModelCatalog(file({ b: { kind: 'bedrock', region: 'us-east-1' } }), {
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://127.0.0.1:4566',
    });
    expect(fromEnv.catalog!.providers.get('b')!.endpoints.messages!.base_url).to.equal('http://127.0.0.1:4566');
  });

  it('reports every problem of its entry together, each naming its place', () => {
    const { problems } = parseModelCatalog(
      file({
        b: { kind: 'bedrock', messages_base_url: 'http://x/anthropic' },
        c: { kind: 'bedrock', region: 'Frankfurt' },
        d: { chat_completions_base_url: 'http://x/v1', region: 'us-east-1' },
      }),
      {},
    );
    const text = problems.join('\n');
    expect(text).to.include('provider "b": region: required for "kind": "bedrock"');
    expect(text).to.include('provider "b": messages_base_url: a Bedrock provider is reached at its region (or endpoint_url), not by base URLs');
    expect(text).to.include('provider "c": region: an AWS region such as us-east-1');
    expect(text).to.include('provider "d": region: region is for "kind": "bedrock"');
    expect(text).to.include('provider "d": api_key_env: a provider needs api_key_env');
  });
});
