import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { redisForTests, seedKey, startDataPlane, TEST_REDIS_URL, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, modelBody, sseData } from '../../support/edge-calls.js';
import type { RunningProxy } from '../../../proxy/runtime.js';

/**
 * Responses state belongs to its workspace (docs/security.md, round two,
 * finding 4): a previous_response_id is forwarded only for the workspace that
 * received that response, and the provider keeps nothing unless the operator
 * opts in (PROXY_RESPONSES_STORE).
 */

const MODEL = 'tg/gpt-responses';
const body = (extra: Record<string, unknown> = {}) => modelBody('responses', { model: MODEL, ...extra });

/** A Responses call of this key; the response id the client was given. */
async function respond(proxy: RunningProxy, k: SeededKey, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await edgeCall(proxy.url, 'responses', k.slug, k.secret, body(extra));
  expect(answer.status, answer.text).to.equal(200);
  if (extra.stream === true) {
    const created = sseData(answer.text).find((e) => e.type === 'response.created') as { response: { id: string } };
    return created.response.id;
  }
  return answer.body.id as string;
}

function expectRefused(answer: Awaited<ReturnType<typeof edgeCall>>, id: string): void {
  expect(answer.status, answer.text).to.equal(404);
  expect(answer.body.error).to.deep.include({
    type: 'invalid_request_error',
    code: 'previous_response_not_found',
    message: `Previous response with id '${id}' not found.`,
  });
}

function sentBody(dp: DataPlane) {
  return (at: number) => (dp.fake.requests[at]?.body as Record<string, unknown> | undefined) ?? {};
}

/** Two organizations, each with its own workspace and a key allowed the Responses model. */
async function twoTenants(dp: DataPlane): Promise<[SeededKey, SeededKey]> {
  return [await seedKey(dp.cp.deps, { models: [MODEL] }), await seedKey(dp.cp.deps, { models: [MODEL] })];
}

describeEachStore('proxy: Responses state is bound to its workspace (store allowed by the operator)', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_RESPONSES_STORE: 'true' } });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'whole'}: another workspace's previous_response_id is refused with a 404 and never reaches the provider; the owner's goes through`, async () => {
      const [a, b] = await twoTenants(dp);
      const id = await respond(dp.proxy, a, { stream });
      expect(dp.fake.requests).to.have.length(1);

      const stolen = await edgeCall(dp.proxy.url, 'responses', b.slug, b.secret, body({ previous_response_id: id }));
      expectRefused(stolen, id);
      expect(dp.fake.requests, 'nothing was forwarded').to.have.length(1);

      const own = await edgeCall(dp.proxy.url, 'responses', a.slug, a.secret, body({ previous_response_id: id }));
      expect(own.status, own.text).to.equal(200);
      expect(sentBody(dp)(1).previous_response_id).to.equal(id);
    });
  }

  it('an id the proxy never issued is refused the same way (unknown and foreign answer alike)', async () => {
    const [a] = await twoTenants(dp);
    const answer = await edgeCall(dp.proxy.url, 'responses', a.slug, a.secret, body({ previous_response_id: 'resp_never_issued' }));
    expectRefused(answer, 'resp_never_issued');
    expect(dp.fake.requests).to.have.length(0);
  });

  it("with the operator's opt-in the client's bytes go as they came: no store field added", async () => {
    const [a] = await twoTenants(dp);
    await respond(dp.proxy, a);
    expect(sentBody(dp)(0)).to.not.have.property('store');
  });
});

describeEachStore('proxy: pass-through Responses keep nothing at the provider by default', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  it('a call that leaves store out (or null) is sent with store: false', async () => {
    const [a] = await twoTenants(dp);
    await respond(dp.proxy, a);
    await respond(dp.proxy, a, { store: null, stream: true });
    expect(sentBody(dp)(0).store).to.equal(false);
    expect(sentBody(dp)(1).store).to.equal(false);
  });

  it('a call asking store: true gets a 400 naming the field, and nothing is sent', async () => {
    const [a] = await twoTenants(dp);
    const answer = await edgeCall(dp.proxy.url, 'responses', a.slug, a.secret, body({ store: true }));
    expect(answer.status, answer.text).to.equal(400);
    expect(answer.body.error.code).to.equal('store_not_allowed');
    expect(answer.body.error.message).to.match(/^store: /);
    expect(dp.fake.requests).to.have.length(0);
  });

  it('with nothing stored, no previous_response_id is forwarded, its own workspace’s included', async () => {
    const [a] = await twoTenants(dp);
    const id = await respond(dp.proxy, a);
    expectRefused(await edgeCall(dp.proxy.url, 'responses', a.slug, a.secret, body({ previous_response_id: id })), id);
    expect(dp.fake.requests).to.have.length(1);
  });
});

describeEachStore('proxy: response ids shared by every proxy through Redis', (store) => {
  let dp: DataPlane | undefined;
  before(async function () {
    const prefix = await redisForTests('response ids in Redis');
    if (!prefix) this.skip();
    dp = await startDataPlane(store, {
      env: { PROXY_RESPONSES_STORE: 'true', REDIS_URL: TEST_REDIS_URL, PROXY_REDIS_PREFIX: prefix },
      proxies: [{}, {}],
    });
  });
  beforeEach(() => dp?.fake.reset());
  after(() => dp?.close());

  it('an id issued through one proxy is continued through another by its workspace, and refused there to another', async () => {
    const plane = dp!;
    const [a, b] = await twoTenants(plane);
    const id = await respond(plane.proxies[0]!, a);
    // The record is written as the answer ends, without holding it up: give it its round trip.
    await new Promise((r) => setTimeout(r, 100));
    expectRefused(await edgeCall(plane.proxies[1]!.url, 'responses', b.slug, b.secret, body({ previous_response_id: id })), id);
    expect(plane.fake.requests).to.have.length(1);
    const own = await edgeCall(plane.proxies[1]!.url, 'responses', a.slug, a.secret, body({ previous_response_id: id }));
    expect(own.status, own.text).to.equal(200);
    expect(plane.fake.requests).to.have.length(2);
  });
});
