import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

/** A query a client might try to steer a provider with: a beta marker, another API version, a key of its own. */
const QUERY = '?beta=true&api-version=1999-01-01&key=client-chosen';

interface Case {
  what: string;
  path: string;
  model: string;
  body: Record<string, unknown>;
  /** The provider endpoint the call must reach (without a query string). */
  reaches: string;
}

const say = [{ role: 'user', content: 'hi' }];
const MESSAGES = { max_tokens: 16, messages: say };

/** Every endpoint that forwards to a provider, in every format, passed through and translated. */
const CASES: Case[] = [
  { what: 'Chat on a Chat provider', path: 'v1/chat/completions', model: 'tg/sonnet', body: { messages: say }, reaches: '/v1/chat/completions' },
  {
    what: 'Chat on a Messages provider',
    path: 'v1/chat/completions',
    model: 'tg/claude-direct',
    body: { messages: say },
    reaches: '/anthropic/v1/messages',
  },
  { what: 'Messages on a Messages provider', path: 'anthropic/v1/messages', model: 'tg/sonnet', body: MESSAGES, reaches: '/anthropic/v1/messages' },
  { what: 'Messages on a Chat provider', path: 'anthropic/v1/messages', model: 'tg/gpt-direct', body: MESSAGES, reaches: '/v1/chat/completions' },
  { what: 'Responses on a Responses provider', path: 'v1/responses', model: 'tg/gpt-responses', body: { input: 'hi' }, reaches: '/v1/responses' },
  { what: 'Responses on a Chat provider', path: 'v1/responses', model: 'tg/gpt-direct', body: { input: 'hi' }, reaches: '/v1/chat/completions' },
  {
    what: 'Messages count_tokens',
    path: 'anthropic/v1/messages/count_tokens',
    model: 'tg/sonnet',
    body: { messages: say },
    reaches: '/anthropic/v1/messages/count_tokens',
  },
  {
    what: 'Responses input_tokens',
    path: 'v1/responses/input_tokens',
    model: 'tg/gpt-responses',
    body: { input: 'hi' },
    reaches: '/v1/responses/input_tokens',
  },
  { what: 'embeddings', path: 'v1/embeddings', model: 'tg/gpt-direct', body: { input: 'hi' }, reaches: '/v1/embeddings' },
];

/**
 * The client's query string is never sent to a provider (docs/security.md):
 * it belongs to the proxy's API, and a provider given one could be steered
 * (an API version, a key, a self-hosted server's debug switch). Before, a
 * Messages call's query went through as it came.
 */
describeEachStore("proxy: the client's query string never reaches a provider", (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: [...new Set(CASES.map((c) => c.model))] });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const c of CASES) {
    it(`${c.what}: the provider sees its path with no query`, async () => {
      const res = await fetch(`${dp.proxy.url}/${k.slug}/${c.path}${QUERY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${k.secret}`, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: c.model, ...c.body }),
      });
      expect(res.status, await res.text()).to.equal(200);
      expect(dp.fake.requests.map((r) => `${r.path}${r.query}`)).to.deep.equal([c.reaches]);
    });
  }
});
