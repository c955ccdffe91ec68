import { expect } from 'chai';
import { parseModelCatalog } from '../../../shared/models.js';
import { listedModels, modelByName } from '../../../shared/client-names.js';

/**
 * `client_names` in the models file (CONTRACT §1.2): names clients send that
 * mean an alias, a trailing `*` matching a prefix, no name claimed twice.
 */
type Json = Record<string, unknown>;
const PROVIDER = { messages_base_url: 'http://x', api_key_env: 'K' };
const model = (alias: string, extra: Json = {}): Json => ({
  alias,
  provider: 'p',
  upstream_model: 'm',
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  max_output_tokens: 100,
  ...extra,
});
const parse = (models: Json[]): ReturnType<typeof parseModelCatalog> =>
  parseModelCatalog({ alias_prefix: 'tg', providers: { p: PROVIDER }, models }, {});

describe('models file: client names', () => {
  const { catalog } = parse([
    model('tg/sonnet', { client_names: ['claude-sonnet-4-6', 'claude-sonnet-4-6[1m]', 'claude-*'], max_input_tokens: 200_000 }),
    model('tg/haiku', { client_names: ['claude-haiku-*'] }),
    model('tg/opus', { client_names: ['claude-opus-4-7'] }),
  ]);

  it('resolves an alias, a name written out, and the longest matching prefix to its alias', () => {
    expect(modelByName(catalog!, 'tg/opus')?.alias).to.equal('tg/opus');
    expect(modelByName(catalog!, 'claude-sonnet-4-6[1m]')?.alias).to.equal('tg/sonnet');
    expect(modelByName(catalog!, 'claude-haiku-4-5-20251001')?.alias).to.equal('tg/haiku');
    expect(modelByName(catalog!, 'claude-opus-4-7')?.alias).to.equal('tg/opus');
    // `claude-*` takes what no longer prefix or written-out name claims.
    expect(modelByName(catalog!, 'claude-opus-4-1')?.alias).to.equal('tg/sonnet');
    expect(modelByName(catalog!, 'gpt-5')).to.equal(undefined);
  });

  it('lists each alias and then its written-out names (not patterns), only for the aliases given', () => {
    const ids = listedModels(catalog!, ['tg/sonnet', 'tg/haiku']).map((m) => [m.id, m.model.alias]);
    expect(ids).to.deep.equal([
      ['tg/sonnet', 'tg/sonnet'],
      ['tg/haiku', 'tg/haiku'],
      ['claude-sonnet-4-6', 'tg/sonnet'],
      ['claude-sonnet-4-6[1m]', 'tg/sonnet'],
    ]);
    expect(catalog!.models.get('tg/sonnet')!.max_input_tokens).to.equal(200_000);
  });

  it('refuses a name claimed twice, a name that is an alias, a `*` inside a name and a bare `*`, each at its place', () => {
    const { problems } = parse([
      model('tg/a', { client_names: ['claude-x', 'claude-*'] }),
      model('tg/b', { client_names: ['claude-x', 'tg/a', 'cl*aude', '*'] }),
      model('tg/c', { client_names: ['claude-*'] }),
    ]);
    expect(problems).to.deep.equal([
      'models file: model "tg/b": client_names[2]: a `*` may only end the name',
      'models file: model "tg/b": client_names[3]: a bare `*` would match every name: list the names or a prefix',
      'models file: model "tg/b": client_names[0]: "claude-x" is already a client name of model "tg/a"',
      'models file: model "tg/b": client_names[1]: "tg/a" is an alias',
      'models file: model "tg/c": client_names[0]: "claude-*" is already a client name of model "tg/a"',
    ]);
  });
});
