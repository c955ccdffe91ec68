import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, FORMATS, modelBody } from '../../support/edge-calls.js';

const MAX_TOKENS = 64;

describeEachStore('proxy: malformed usage is billed as missing usage (the hold)', (store) => {
  let world: DataPlane;
  before(async () => {
    world = await startDataPlane(store);
  });
  after(() => world?.close());

  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      for (const as of ['-5', '"12"', 'null']) {
        it(`${format}${stream ? ', streamed' : ''}: an output count of ${as} bills the hold, not nothing`, async () => {
          world.fake.reset();
          world.fake.enqueue({ kind: 'ok', outputTokens: 10, outputCountAs: as });
          const k = await seedKey(world.cp.deps, { budgetUsd: 5 });
          const body = modelBody(format, { max_tokens: MAX_TOKENS, stream });
          const a = await edgeCall(world.proxies[0]!.url, format, k.slug, k.secret, body);
          expect(a.status).to.equal(200);
          await Promise.all(world.proxies.map((p) => p.drain()));
          const m = await moneyOf(world.cp.deps, k);
          // The hold: the input estimate (body bytes / 3) at $3/Mtok and the whole ceiling at $15/Mtok (tg/sonnet).
          const estimate = Math.ceil(Buffer.byteLength(a.sent) / 3);
          expect(m.entries).to.equal(1);
          expect(m.spend).to.be.closeTo((estimate * 3 + MAX_TOKENS * 15) / 1e6, 1e-9);
        });
      }
    }
  }

  it('a well-formed count is billed as reported', async () => {
    world.fake.reset();
    world.fake.enqueue({ kind: 'ok', outputTokens: 10 });
    const k = await seedKey(world.cp.deps, { budgetUsd: 5 });
    const a = await edgeCall(world.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { max_tokens: MAX_TOKENS }));
    expect(a.status).to.equal(200);
    await Promise.all(world.proxies.map((p) => p.drain()));
    const m = await moneyOf(world.cp.deps, k);
    expect(m.spend).to.be.below((MAX_TOKENS * 15) / 1e6);
  });
});
