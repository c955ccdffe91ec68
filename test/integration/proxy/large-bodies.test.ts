import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { codexRequest } from '../../support/responses-bodies.js';

interface Case {
  what: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

const say = [{ role: 'user', content: 'hi' }];
const tool = { name: 'get_weather', description: 'Weather.', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

/** Calls whose every step touches the body: passed through, translated one hop and two, streamed, counted, refused. */
const CASES: Case[] = [
  { what: 'Chat passed through, streamed', path: 'v1/chat/completions', body: { model: 'tg/sonnet', messages: say, stream: true } },
  { what: 'Chat → Messages', path: 'v1/chat/completions', body: { model: 'tg/claude-direct', messages: say, stop: ['END'] } },
  { what: 'Chat → Responses', path: 'v1/chat/completions', body: { model: 'tg/gpt-responses', messages: say } },
  { what: 'Messages passed through', path: 'anthropic/v1/messages', body: { model: 'tg/sonnet', max_tokens: 16, messages: say } },
  {
    what: 'Messages → Chat, streamed, with a tool',
    path: 'anthropic/v1/messages',
    body: { model: 'tg/gpt-direct', max_tokens: 16, messages: say, tools: [tool], stream: true },
  },
  {
    what: 'Messages → Responses',
    path: 'anthropic/v1/messages',
    body: { model: 'tg/gpt-responses', max_tokens: 16, system: [{ type: 'text', text: 'Be brief.' }], messages: say },
  },
  { what: 'Responses passed through', path: 'v1/responses', body: { model: 'tg/gpt-responses', input: 'hi' } },
  { what: 'Responses → Chat (a Codex turn), streamed', path: 'v1/responses', body: codexRequest({ stream: true }) },
  { what: 'Responses → Messages', path: 'v1/responses', body: { model: 'tg/claude-direct', input: 'hi', max_output_tokens: 16 } },
  { what: 'count_tokens estimated here', path: 'anthropic/v1/messages/count_tokens', body: { model: 'tg/gpt-direct', messages: say, tools: [tool] } },
  { what: 'count_tokens asked of the provider', path: 'anthropic/v1/messages/count_tokens', body: { model: 'tg/sonnet', messages: say } },
  { what: 'input_tokens estimated here', path: 'v1/responses/input_tokens', body: { model: 'tg/gpt-direct', input: 'hi' } },
  { what: 'a body that is not JSON', path: 'anthropic/v1/messages', body: '{"model":' },
  { what: 'a body nested too deep', path: 'v1/chat/completions', body: `{"model":"tg/sonnet","messages":${'['.repeat(200)}${']'.repeat(200)}}` },
  { what: 'a Messages call missing max_tokens', path: 'anthropic/v1/messages', body: { model: 'tg/sonnet', messages: say } },
  {
    what: 'a Chat call a Messages provider cannot take (n: 2)',
    path: 'v1/chat/completions',
    body: { model: 'tg/claude-direct', messages: say, n: 2 },
  },
  { what: 'an unknown model', path: 'v1/responses', body: { model: 'tg/nope', input: 'hi' } },
];

/** What may differ between two answers to the same call: ids and times the proxy or the provider made up. */
function comparable(text: string): string {
  return text
    .replace(/"(id|created|created_at|system_fingerprint|request_id)":\s*("[^"]*"|\d+)/g, '"$1":"…"')
    .replace(/(msg|resp|chatcmpl|req|rs|call|fc|toolu)_[A-Za-z0-9]+/g, '$1_…');
}

/**
 * A body at or above PROXY_OFFLOAD_BODY_BYTES is parsed, checked, translated
 * and counted in a worker thread (proxy/body-work/), a smaller one on the
 * event loop. The two must answer alike: one proxy sends every body to a
 * worker (threshold 1 byte), the other none, and each call's answer and what
 * the provider was sent are compared.
 */
describeEachStore('proxy: a body worked on in a worker answers as one worked on the event loop', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store, { proxies: [{}, { env: { PROXY_OFFLOAD_BODY_BYTES: '1' } }] });
    k = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/gpt-direct', 'tg/claude-direct', 'tg/gpt-responses'] });
  });
  after(() => dp.close());

  async function call(proxyUrl: string, c: Case): Promise<{ status: number; text: string; sent: unknown }> {
    dp.fake.reset();
    const res = await fetch(`${proxyUrl}/${k.slug}/${c.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${k.secret}`, 'anthropic-version': '2023-06-01', ...c.headers },
      body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
    });
    const text = await res.text();
    return { status: res.status, text: comparable(text), sent: dp.fake.requests.map((r) => [r.path, r.body]) };
  }

  for (const c of CASES) {
    it(`${c.what}: the same status, answer and provider request`, async () => {
      const inline = await call(dp.proxies[0]!.url, c);
      const offloaded = await call(dp.proxies[1]!.url, c);
      expect(offloaded.status, offloaded.text).to.equal(inline.status);
      expect(offloaded.text).to.equal(inline.text);
      expect(offloaded.sent).to.deep.equal(inline.sent);
    });
  }
});
