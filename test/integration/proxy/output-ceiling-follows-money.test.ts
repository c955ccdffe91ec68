import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, redisForTests, seedKey, startDataPlane, TEST_REDIS_URL, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';

/** A worst case ($0.06 of output at $15/Mtok) above the key's whole budget: only lowered calls can be served. */
const ASKED = 4000;
const BUDGET = 0.05;
const MIN_OUTPUT = 256;
const ANSWER = 1000;
/** The dearest call the proxy may still refuse with money left: the minimum output plus a generous input estimate. */
const MIN_CALL_USD = (MIN_OUTPUT * 15 + 200 * 3) / 1e6;

/** Each format on two aliases at the same prices: one whose provider speaks it and one it is translated for. */
const SERVED_ON: Record<WireFormat, readonly [string, string]> = {
  chat: ['tg/sonnet', 'tg/claude-direct'],
  messages: ['tg/sonnet', 'tg/gpt-direct'],
  // tg/sonnet's provider speaks Chat and Messages: a Responses call there is translated as well.
  responses: ['tg/sonnet', 'tg/claude-direct'],
  gemini: ['tg/gemini-direct', 'tg/gpt-direct'],
};
const LENGTH_STOP: Record<WireFormat, (body: string) => boolean> = {
  chat: (t) => t.includes('"finish_reason":"length"'),
  messages: (t) => t.includes('"stop_reason":"max_tokens"'),
  responses: (t) => t.includes('"max_output_tokens"'),
  gemini: (t) => t.includes('"finishReason":"MAX_TOKENS"'),
};

function suite(setup: () => Promise<DataPlane | undefined>) {
  let world: DataPlane;
  before(async function () {
    const started = await setup();
    if (!started) this.skip();
    world = started;
  });
  after(() => world?.close());
  beforeEach(() => {
    world.fake.reset();
    // Each answer would use 1,000 tokens: a quarter of the asked worst case, more than the last lowered ceilings (the fake stops there).
    for (let i = 0; i < 300; i++) world.fake.enqueue({ kind: 'ok', outputTokens: ANSWER });
  });
  const drain = () => Promise.all(world.proxies.map((p) => p.drain()));

  for (const format of FORMATS) {
    for (const alias of SERVED_ON[format]) {
      for (const stream of [false, true]) {
        it(`${format}${stream ? ', streamed' : ''} on ${alias}: lowered ceilings until the budget is spent to within a minimum call, then 402, no overspend`, async () => {
          const k = await seedKey(world.cp.deps, { budgetUsd: BUDGET, models: [...SERVED_ON[format]] });
          const limits: number[] = [];
          let last = 0;
          for (let i = 0; i < 40; i++) {
            const a = await edgeCall(world.proxies[0]!.url, format, k.slug, k.secret, modelBody(format, { model: alias, max_tokens: ASKED, stream }));
            last = a.status;
            if (a.status !== 200) break;
            const limit = Number(a.headers.get('x-tollgate-output-limit'));
            expect(limit, 'a lowered call names its ceiling').to.be.within(MIN_OUTPUT, ASKED - 1);
            // A ceiling below what the model would say: the client sees its format's ordinary length stop.
            if (limit < ANSWER) expect(LENGTH_STOP[format](a.text), a.text.slice(0, 300)).to.equal(true);
            limits.push(limit);
          }
          expect(last, 'once no minimum call fits: 402').to.equal(402);
          expect(limits.length, 'several lowered calls were served first').to.be.at.least(3);
          // Later calls get smaller ceilings as the money goes.
          expect(limits[limits.length - 1]).to.be.below(limits[0]!);
          expect(
            limits.some((l) => l < ANSWER),
            'the last call was cut at its lowered ceiling',
          ).to.equal(true);
          await drain();
          const m = await moneyOf(world.cp.deps, k);
          expect(m.entries).to.equal(limits.length);
          expect(m.spend).to.be.at.most(BUDGET);
          expect(BUDGET - m.spend).to.be.below(MIN_CALL_USD);
        });
      }
    }
  }

  it('50 concurrent calls on a nearly spent key share what is left: no overspend, several served with smaller ceilings', async () => {
    const budget = 0.03; // about seven minimum calls, a fraction of one worst case
    const k = await seedKey(world.cp.deps, { budgetUsd: budget });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => edgeCall(world.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { max_tokens: ASKED }))),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.every((s) => s === 200 || s === 402),
      statuses.join(),
    ).to.equal(true);
    const served = answers.filter((a) => a.status === 200);
    for (const a of served) expect(Number(a.headers.get('x-tollgate-output-limit'))).to.be.within(MIN_OUTPUT, ASKED - 1);
    await drain();
    const m = await moneyOf(world.cp.deps, k);
    expect(m.entries).to.equal(served.length);
    expect(m.spend).to.be.at.most(budget);
    // Lowered calls share what is left (each takes at most half of it): several are served, not just the first.
    expect(served.length).to.be.at.least(3);
    expect(statuses.filter((s) => s === 402).length, 'the rest refused once no minimum call fitted').to.equal(50 - served.length);
  });

  it('a call with plenty of money left is sent as asked, with no output-limit header', async () => {
    const k = await seedKey(world.cp.deps, { budgetUsd: 10 });
    const a = await edgeCall(world.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { max_tokens: ASKED }));
    expect(a.status).to.equal(200);
    expect(a.headers.get('x-tollgate-output-limit')).to.equal(null);
    expect((world.fake.requests.at(-1)!.body as { max_tokens: number }).max_tokens).to.equal(ASKED);
  });

  describe("one output-ceiling rule: the alias's max_output_tokens caps every call, in the provider's field", () => {
    const sent = () => world.fake.requests.at(-1)!.body as Record<string, unknown>;
    const cases: [WireFormat, string, Record<string, unknown>, string, number][] = [
      ['chat', 'tg/gpt-direct', {}, 'max_completion_tokens', 16384], // passed through, no ceiling given
      ['chat', 'tg/claude-direct', { max_tokens: 100_000 }, 'max_tokens', 64000], // translated to Messages
      ['responses', 'tg/gpt-direct', {}, 'max_completion_tokens', 16384], // translated to Chat, none given
      ['responses', 'tg/claude-direct', { max_tokens: 100_000 }, 'max_tokens', 64000], // translated to Messages, above the cap
      ['responses', 'tg/gpt-responses', { max_tokens: 100_000 }, 'max_output_tokens', 16384], // passed through, above the cap
      ['messages', 'tg/gpt-direct', { max_tokens: 100_000 }, 'max_tokens', 16384], // translated to Chat
      ['gemini', 'tg/gpt-direct', { max_tokens: 100_000 }, 'max_tokens', 16384], // translated to Chat, above the cap
    ];
    for (const [format, alias, extra, field, cap] of cases) {
      it(`${format} on ${alias} ${JSON.stringify(extra)}: ${field} ${cap} is sent`, async () => {
        const k = await seedKey(world.cp.deps, { models: [...new Set(['tg/sonnet', alias])] });
        const a = await edgeCall(world.proxies[0]!.url, format, k.slug, k.secret, { ...modelBody(format, { model: alias, ...extra }) });
        expect(a.status, a.text).to.equal(200);
        expect(sent()[field]).to.equal(cap);
      });
    }
  });

  it('a Messages call whose thinking budget would not fit the lowered ceiling is refused with 402 saying why', async () => {
    const k = await seedKey(world.cp.deps, { budgetUsd: 0.02 });
    const body = modelBody('messages', { max_tokens: ASKED, thinking: { type: 'enabled', budget_tokens: 3000 } });
    const a = await edgeCall(world.proxies[0]!.url, 'messages', k.slug, k.secret, body);
    expect(a.status).to.equal(402);
    expect(a.body.error.message).to.match(/budget_tokens/);
    // The refused call held nothing: a call that fits is still served whole.
    const ok = await edgeCall(world.proxies[0]!.url, 'messages', k.slug, k.secret, modelBody('messages', { max_tokens: 500 }));
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('x-tollgate-output-limit')).to.equal(null);
  });
}

describeEachStore('proxy: the output ceiling follows the money', (store) => {
  suite(() => startDataPlane(store, { env: { PROXY_MIN_OUTPUT_TOKENS: String(MIN_OUTPUT) } }));
});

describeEachStore('proxy: the output ceiling follows the money, holds in Redis', (store) => {
  suite(async () => {
    const prefix = await redisForTests('the output ceiling follows the money');
    if (!prefix) return undefined;
    return startDataPlane(store, { env: { PROXY_MIN_OUTPUT_TOKENS: String(MIN_OUTPUT), REDIS_URL: TEST_REDIS_URL, PROXY_REDIS_PREFIX: prefix } });
  });
});
