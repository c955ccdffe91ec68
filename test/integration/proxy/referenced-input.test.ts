import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall } from '../../support/edge-calls.js';

/** A provider that keeps responses, $3 per million input tokens, the default 200,000-token window: a referring call is held $0.60 of input. */
const MODEL = 'tg/gpt-responses';
const CHAT_MODEL = 'tg/gpt-4o-mini';
const BILLED_INPUT = 200_000;

const body = (extra: Record<string, unknown> = {}) => ({ model: MODEL, input: 'Go on.', max_output_tokens: 100, ...extra });

describeEachStore('proxy: holds for input a body refers to without carrying it (#43 finding 1)', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_RESPONSES_STORE: 'true' } });
  });
  after(() => dp.close());

  it('20 concurrent Responses calls with previous_response_id on a $0.05 key: spend stays within the budget', async () => {
    const budget = 0.05;
    const k = await seedKey(dp.cp.deps, { models: [MODEL], budgetUsd: budget });
    dp.fake.reset();
    const first = await edgeCall(dp.proxy.url, 'responses', k.slug, k.secret, body());
    expect(first.status, first.text).to.equal(200);
    await dp.proxy.drain();
    // The provider bills the whole stored conversation each time: 200,000 input tokens, $0.60 a call.
    for (let i = 0; i < 20; i++) dp.fake.enqueue({ kind: 'ok', outputTokens: 50, inputTokens: BILLED_INPUT });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => edgeCall(dp.proxy.url, 'responses', k.slug, k.secret, body({ previous_response_id: first.body.id }))),
    );
    const statuses = answers.map((a) => a.status);
    // Held at the window, none fits the $0.05; sized by their few body bytes, all twenty would have been sent ($12 billed).
    expect(
      statuses.every((s) => s === 402),
      answers[0]!.text,
    ).to.equal(true);
    await dp.proxy.drain();
    const m = await moneyOf(dp.cp.deps, k);
    expect(m.spend).to.be.at.most(budget);
  });

  it('a call that carries its input is held by its size, as before', async () => {
    const k = await seedKey(dp.cp.deps, { models: [MODEL], budgetUsd: 0.01 });
    dp.fake.reset();
    const a = await edgeCall(dp.proxy.url, 'responses', k.slug, k.secret, body());
    expect(a.status, a.text).to.equal(200);
  });

  it('an image by URL is held at the window (Chat Completions), a data: URL is not', async () => {
    const k = await seedKey(dp.cp.deps, { models: [CHAT_MODEL], budgetUsd: 0.01 });
    dp.fake.reset();
    const content = (url: string) => [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }];
    const byUrl = await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, {
      model: CHAT_MODEL,
      max_tokens: 10,
      messages: content('https://example.com/a.png'),
    });
    expect(byUrl.status, 'the window ($0.03) does not fit $0.01').to.equal(402);
    const inline = await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, {
      model: CHAT_MODEL,
      max_tokens: 10,
      messages: content('data:image/png;base64,AAAA'),
    });
    expect(inline.status, inline.text).to.equal(200);
  });
});

describeEachStore('proxy: referenced input turned off by the operator', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_REFERENCED_INPUT: 'off' } });
  });
  after(() => dp.close());

  it('a Messages document by URL is refused with a 400 in the Messages shape, and nothing is forwarded', async () => {
    const k = await seedKey(dp.cp.deps);
    dp.fake.reset();
    const doc = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const a = await edgeCall(dp.proxy.url, 'messages', k.slug, k.secret, {
      model: 'tg/sonnet',
      max_tokens: 10,
      messages: [{ role: 'user', content: [doc] }],
    });
    expect(a.status).to.equal(400);
    expect(a.body.type).to.equal('error');
    expect(a.body.error.message).to.match(/refers to/);
    expect(dp.fake.requests).to.have.length(0);
  });
});
