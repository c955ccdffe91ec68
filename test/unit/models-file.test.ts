import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonErrorWithLine, loadModelCatalog, parseModelCatalog } from '../../shared/models.js';
import { listedModels, modelByName } from '../../shared/client-names.js';

/**
 * The models file is checked in one round: every problem of every entry,
 * shape and cross-references alike, each naming the alias it belongs to.
 */
type Json = Record<string, unknown>;
const PROVIDER = { chat_completions_base_url: 'http://x/v1', api_key_env: 'K' };
const model = (alias: string, extra: Json = {}): Json => ({
  alias,
  provider: 'p',
  upstream_model: 'm',
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  max_output_tokens: 100,
  ...extra,
});
const file = (models: unknown[], providers: Json = { p: PROVIDER }, extra: Json = {}): Json => ({ alias_prefix: 'tg', providers, models, ...extra });
const problems = (raw: Json): string[] => parseModelCatalog(raw, {}).problems;
const only = (extra: Json): Json => {
  const m = model('tg/x', extra);
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete m[k];
  return m;
};

describe('models file', () => {
  it('turns one provider + upstream_model into one deployment, keeping the primary where the proxy reads it', () => {
    const { catalog, problems: found } = parseModelCatalog(file([model('tg/x')]), { K: 'sk' });
    expect(found).to.deep.equal([]);
    const x = catalog!.models.get('tg/x')!;
    expect(x.deployments).to.deep.equal([{ provider: 'p', upstream_model: 'm', weight: undefined }]);
    expect([x.provider, x.upstream_model, x.fallbacks, x.reasoning]).to.deep.equal(['p', 'm', [], false]);
  });

  it('keeps deployments in order, fallbacks, reasoning and weights', () => {
    const raw = file(
      [
        model('tg/a', {
          provider: undefined,
          upstream_model: undefined,
          deployments: [
            { provider: 'p', upstream_model: 'one', weight: 3 },
            { provider: 'r', upstream_model: 'two', weight: 1 },
          ],
          fallbacks: ['tg/b'],
          reasoning: true,
        }),
        model('tg/b'),
      ].map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined))),
      { p: PROVIDER, r: { responses_base_url: 'https://api.openai.com/v1', api_key_env: 'R' } },
    );
    const { catalog, problems: found } = parseModelCatalog(raw, {});
    expect(found).to.deep.equal([]);
    const a = catalog!.models.get('tg/a')!;
    expect(a.deployments.map((d) => [d.provider, d.upstream_model, d.weight])).to.deep.equal([
      ['p', 'one', 3],
      ['r', 'two', 1],
    ]);
    expect([a.provider, a.upstream_model, a.fallbacks, a.reasoning]).to.deep.equal(['p', 'one', ['tg/b'], true]);
    expect(catalog!.providers.get('r')!.endpoints.responses?.base_url).to.equal('https://api.openai.com/v1');
  });

  describe('provider endpoints', () => {
    const providerOf = (entry: Json) => parseModelCatalog(file([model('tg/x')], { p: entry }), { K: 'sk' });

    it('reads endpoints by format, with the auth header only where given', () => {
      const { catalog, problems: found } = providerOf({
        api_key_env: 'K',
        endpoints: { messages: { base_url: 'https://a/anthropic' }, chat_completions: { base_url: 'https://a/v1', auth_header: 'api-key' } },
      });
      expect(found).to.deep.equal([]);
      expect(catalog!.providers.get('p')!.endpoints).to.deep.equal({
        chat: { base_url: 'https://a/v1', auth_header: 'api-key' },
        messages: { base_url: 'https://a/anthropic', auth_header: undefined },
      });
    });

    it('reads the older *_base_url / *_auth_header fields as the same map', () => {
      const older = providerOf({
        api_key_env: 'K',
        chat_completions_base_url: 'https://a/v1',
        chat_completions_auth_header: 'api-key',
        messages_base_url: 'https://a/anthropic',
      });
      const newer = providerOf({
        api_key_env: 'K',
        endpoints: { chat_completions: { base_url: 'https://a/v1', auth_header: 'api-key' }, messages: { base_url: 'https://a/anthropic' } },
      });
      expect(older.catalog!.providers.get('p')).to.deep.equal(newer.catalog!.providers.get('p'));
    });

    it('refuses one format given in both spellings, an unknown format, and an auth header without its base URL', () => {
      expect(
        providerOf({ api_key_env: 'K', chat_completions_base_url: 'https://a/v1', endpoints: { chat_completions: { base_url: 'https://b/v1' } } })
          .problems,
      ).to.deep.equal([
        'models file: provider "p": chat_completions_base_url: give either endpoints.chat_completions or chat_completions_base_url, not both',
      ]);
      expect(providerOf({ api_key_env: 'K', endpoints: { chat: { base_url: 'https://a/v1' } } }).problems).to.deep.equal([
        'models file: provider "p": endpoints: Unrecognized key: "chat"',
        'models file: provider "p": a provider needs at least one endpoint: endpoints.{chat_completions,messages,responses} (or the older chat_completions_base_url, messages_base_url, responses_base_url)',
      ]);
      expect(
        providerOf({ api_key_env: 'K', messages_base_url: 'https://a/anthropic', chat_completions_auth_header: 'api-key' }).problems,
      ).to.deep.equal(['models file: provider "p": chat_completions_auth_header: needs chat_completions_base_url']);
    });
  });

  it('keeps prices exact in micro-dollars and leaves absent ones absent', () => {
    const { catalog } = parseModelCatalog(
      file([
        model('tg/x', { input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6, cache_write_usd_per_mtok: 0.1875, web_search_usd_per_request: 0.01 }),
      ]),
      {},
    );
    expect(catalog!.models.get('tg/x')!.prices).to.deep.equal({
      input: 150_000,
      output: 600_000,
      cache_read: undefined,
      cache_write: 187_500,
      cache_write_1h: undefined,
      web_search_per_request: 10_000,
    });
  });

  it('accepts a provider with any one, two or three of the base URLs, and none is an error', () => {
    for (const urls of [
      { responses_base_url: 'http://x/v1' },
      { messages_base_url: 'http://x' },
      { chat_completions_base_url: 'http://x/v1', responses_base_url: 'http://x/v1' },
      { chat_completions_base_url: 'http://x/v1', messages_base_url: 'http://x', responses_base_url: 'http://x/v1' },
    ]) {
      expect(problems(file([model('tg/x')], { p: { ...urls, api_key_env: 'K' } }))).to.deep.equal([]);
    }
    expect(problems(file([model('tg/x')], { p: { api_key_env: 'K' } }))).to.deep.equal([
      'models file: provider "p": a provider needs at least one endpoint: endpoints.{chat_completions,messages,responses} (or the older chat_completions_base_url, messages_base_url, responses_base_url)',
    ]);
  });

  const cases: [string, Json[], string][] = [
    [
      'both provider and deployments',
      [model('tg/x', { deployments: [{ provider: 'p', upstream_model: 'm' }] })],
      'model "tg/x": give either provider + upstream_model or deployments, not both',
    ],
    [
      'neither provider nor deployments',
      [only({ provider: undefined, upstream_model: undefined })],
      'model "tg/x": needs provider + upstream_model, or deployments',
    ],
    ['a provider without upstream_model', [only({ upstream_model: undefined })], 'model "tg/x": provider needs an upstream_model'],
    [
      'weighted and unweighted deployments mixed',
      [
        only({
          provider: undefined,
          upstream_model: undefined,
          deployments: [
            { provider: 'p', upstream_model: 'a', weight: 1 },
            { provider: 'p', upstream_model: 'b' },
          ],
        }),
      ],
      'model "tg/x": deployments: give every deployment a weight or none (weighted and ordered deployments do not mix)',
    ],
    [
      'a weight of zero',
      [only({ provider: undefined, upstream_model: undefined, deployments: [{ provider: 'p', upstream_model: 'a', weight: 0 }] })],
      'model "tg/x": deployments[0].weight: weight must be more than 0',
    ],
    [
      'a negative weight',
      [only({ provider: undefined, upstream_model: undefined, deployments: [{ provider: 'p', upstream_model: 'a', weight: -2 }] })],
      'model "tg/x": deployments[0].weight: weight must be more than 0',
    ],
    [
      'an unknown provider in a deployment',
      [only({ provider: undefined, upstream_model: undefined, deployments: [{ provider: 'ghost', upstream_model: 'a' }] })],
      'model "tg/x": deployments[0].provider: unknown provider "ghost"',
    ],
    ['an unknown provider', [model('tg/x', { provider: 'ghost' })], 'model "tg/x": provider: unknown provider "ghost"'],
    ['an unknown fallback alias', [model('tg/x', { fallbacks: ['tg/ghost'] })], 'model "tg/x": fallbacks: unknown alias "tg/ghost"'],
    ['a fallback to itself', [model('tg/x', { fallbacks: ['tg/x'] })], 'model "tg/x": fallbacks form a loop: tg/x → tg/x'],
    [
      'a loop of fallbacks',
      [model('tg/c', { fallbacks: ['tg/a'] }), model('tg/a', { fallbacks: ['tg/b'] }), model('tg/b', { fallbacks: ['tg/c'] })],
      'model "tg/a": fallbacks form a loop: tg/a → tg/b → tg/c → tg/a',
    ],
    ['a missing input price', [only({ input_usd_per_mtok: undefined })], 'model "tg/x": input_usd_per_mtok: required (expected number)'],
    ['a missing output price', [only({ output_usd_per_mtok: undefined })], 'model "tg/x": output_usd_per_mtok: required (expected number)'],
    [
      'a negative cache price',
      [model('tg/x', { cache_read_usd_per_mtok: -1 })],
      'model "tg/x": cache_read_usd_per_mtok: Too small: expected number to be >=0',
    ],
    [
      'a price finer than a micro-dollar',
      [model('tg/x', { cache_write_1h_usd_per_mtok: 0.1234567 })],
      'model "tg/x": cache_write_1h_usd_per_mtok: at most six decimals (a millionth of a dollar)',
    ],
    [
      'reasoning that is not a boolean',
      [model('tg/x', { reasoning: 'yes' })],
      'model "tg/x": reasoning: Invalid input: expected boolean, received string',
    ],
    ['an alias without the prefix', [model('other/x')], 'model "other/x": alias must start with "tg/"'],
    ['a duplicate alias', [model('tg/x'), model('tg/x')], 'model "tg/x": duplicate alias "tg/x"'],
    ['an unknown field', [model('tg/x', { price: 1 })], 'model "tg/x": Unrecognized key: "price"'],
    ['an entry without an alias', [only({ alias: undefined })], 'models[0]: alias: required (expected string)'],
  ];
  for (const [what, models, expected] of cases) {
    it(`reports ${what}, naming the alias`, () => {
      expect(problems(file(models))).to.deep.equal([`models file: ${expected}`]);
    });
  }

  it('reports schema and cross-reference problems of every entry in one round', () => {
    const found = problems(
      file(
        [
          model('other/a'),
          only({ alias: 'tg/b', input_usd_per_mtok: undefined, provider: 'ghost' }),
          model('tg/b'),
          model('tg/c', { fallbacks: ['tg/nope'], reasoning: 1 }),
        ],
        { p: PROVIDER, q: { api_key_env: 'Q' } },
        { alias_prefix: 'tg', surplus: true },
      ),
    );
    expect(found).to.deep.equal([
      'models file: top level: Unrecognized key: "surplus"',
      'models file: provider "q": a provider needs at least one endpoint: endpoints.{chat_completions,messages,responses} (or the older chat_completions_base_url, messages_base_url, responses_base_url)',
      'models file: model "other/a": alias must start with "tg/"',
      'models file: model "tg/b": input_usd_per_mtok: required (expected number)',
      'models file: model "tg/b": provider: unknown provider "ghost"',
      'models file: model "tg/b": duplicate alias "tg/b"',
      'models file: model "tg/c": reasoning: Invalid input: expected boolean, received number',
      'models file: model "tg/c": fallbacks: unknown alias "tg/nope"',
    ]);
  });

  it('names the line and column of a JSON syntax error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-models-'));
    const path = join(dir, 'models.json');
    writeFileSync(path, '{\n  "alias_prefix": "tg",\n  "providers": {}\n  "models": []\n}\n');
    const [problem] = loadModelCatalog(path, {}).problems;
    expect(problem).to.match(/^MODELS_FILE: .*models\.json is not valid JSON: .*line 4 column 3/);
    // Engines that give only the position still get a line and column.
    expect(jsonErrorWithLine('Unexpected token in JSON at position 5', 'ab\ncdef')).to.equal(
      'Unexpected token in JSON at position 5 (line 2 column 3)',
    );
  });

  it('names a trailing comma and where it is, in an object or an array (V8 gives no position for the array)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-models-'));
    const path = join(dir, 'models.json');
    writeFileSync(path, '{\n  "alias_prefix": "tg, not a comma,]",\n  "providers": {},\n  "models": [],\n}\n');
    expect(loadModelCatalog(path, {}).problems).to.deep.equal([
      `MODELS_FILE: ${path} is not valid JSON: a trailing comma at line 4 column 15 (JSON allows none before } or ])`,
    ]);
    writeFileSync(path, '{\n  "alias_prefix": "tg",\n  "providers": {},\n  "models": [\n    {"alias": "tg/a"},\n  ]\n}\n');
    expect(loadModelCatalog(path, {}).problems[0]).to.match(/a trailing comma at line 5 column 22 /);
  });

  it("the README's Claude Code recipe names aliases the bundled models file has", () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    // The whole section: the recipe without model variables, then the one naming aliases.
    const recipe = readme.split('### Claude Code')[1]!.split('\n### ')[0]!;
    const named = [...recipe.matchAll(/^export ANTHROPIC_[A-Z_]*MODEL=(\S+)/gm)].map((m) => m[1]!);
    expect(named).to.have.length.of.at.least(2);
    const { catalog, problems } = loadModelCatalog(join(root, 'models.example.json'), {});
    expect(problems).to.deep.equal([]);
    for (const alias of named) expect(catalog!.models.has(alias), alias).to.equal(true);
  });
});

/** `client_names`: names clients send that mean an alias, a trailing `*` matching a prefix, no name claimed twice. */
const parseClient = (models: Json[]): ReturnType<typeof parseModelCatalog> => parseModelCatalog(file(models), {});

describe('models file: client names', () => {
  const { catalog } = parseClient([
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
    const { problems } = parseClient([
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
