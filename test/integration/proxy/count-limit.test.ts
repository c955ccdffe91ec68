import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';

const say = [{ role: 'user', content: 'hi' }];

/**
 * Token counts are rate-limited per key (issue 31, finding 1: count_tokens
 * was neither held, billed nor limited, so a loop of huge counts cost the
 * proxy for free): a window of their own at the key's requests per minute,
 * so counting never uses up the key's calls and calls never use up its
 * counts. Past it, a 429 in the caller's format with retry-after.
 */
describeEachStore('proxy: token counts are rate-limited per key', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  after(() => dp.close());

  async function post(slug: string, secret: string, path: string, body: unknown) {
    const res = await fetch(`${dp.proxy.url}/${slug}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as { type?: string; error?: { type?: string } },
    };
  }

  const counts = [
    { format: 'Messages count_tokens', path: 'anthropic/v1/messages/count_tokens', body: { model: 'tg/gpt-direct', messages: say }, anthropic: true },
    { format: 'Responses input_tokens', path: 'v1/responses/input_tokens', body: { model: 'tg/gpt-direct', input: 'hi' }, anthropic: false },
  ];

  for (const c of counts) {
    it(`${c.format}: past the key's requests per minute, 429 in the caller's format with retry-after; the key's calls are untouched`, async () => {
      const k = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'], rpm: 2 });
      for (let i = 0; i < 2; i++) expect((await post(k.slug, k.secret, c.path, c.body)).status).to.equal(200);
      const refused = await post(k.slug, k.secret, c.path, c.body);
      expect(refused.status).to.equal(429);
      expect(refused.retryAfter).to.match(/^[1-9]\d*$/);
      // Anthropic's error envelope says type: error at the top; OpenAI's has only the error object.
      expect(refused.body.type).to.equal(c.anthropic ? 'error' : undefined);
      expect(refused.body.error?.type).to.equal('rate_limit_error');
      // Its own window: the key's two calls a minute are still there.
      for (let i = 0; i < 2; i++)
        expect((await post(k.slug, k.secret, 'v1/chat/completions', { model: 'tg/gpt-direct', messages: say })).status).to.equal(200);
    });
  }
});
