import { createUpstreamAuth } from '../../../proxy/upstream-auth/index.js';
import { createUsageWarnings } from '../../../proxy/money/usage-warnings.js';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createControlPlaneClient } from '../../../proxy/control-plane-client.js';
import { createEdgeHandler, type EdgeDeps } from '../../../proxy/edge/index.js';
import { createMemoryHoldStore, type HoldStore } from '../../../proxy/money/holds.js';
import { createHoldKeepAlive } from '../../../proxy/money/keep-alive.js';
import { createKeyCache } from '../../../proxy/key-cache.js';
import { createMetering, type Metering } from '../../../proxy/money/metering.js';
import { createEdgeObserver } from '../../../proxy/observe.js';
import { openOutbox } from '../../../proxy/money/outbox.js';
import { createRateLimits } from '../../../proxy/rate-limits.js';
import { createRouting } from '../../../proxy/routing/index.js';
import { bodyWorkOf } from '../../../proxy/body-work/index.js';
import { createAbandonedReads } from '../../../proxy/abandoned.js';
import { createLocalResponseIds } from '../../../proxy/response-ids.js';
import { createLogger } from '../../../shared/logger.js';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, testConfig, type TestControlPlane } from '../../support/control-plane.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, UPSTREAM_SECRET, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, ERROR_TYPES, errorType, FORMATS, modelBody } from '../../support/edge-calls.js';

type Fault = 'upstream call' | 'pool' | 'dispatch' | 'settle' | 'unreachable';

/**
 * The edge wired as the runtime wires it, with one fault armed at a time at a
 * step after admission, and a hold store that says which holds are live.
 */
async function startFaultyEdge(cp: TestControlPlane, fake: FakeUpstream) {
  const config = testConfig({ TEST_PRIMARY_API_KEY: UPSTREAM_SECRET });
  for (const p of config.models.providers.values()) {
    p.endpoints = {
      chat: { base_url: fake.chatCompletionsBaseUrl, auth_header: undefined },
      messages: { base_url: fake.messagesBaseUrl, auth_header: undefined },
    };
  }
  const logger = createLogger('silent', 'test-faults');
  const client = createControlPlaneClient(cp.url, cp.deps.config.dataPlaneToken);
  const inner = createMemoryHoldStore(60_000);
  const live = new Set<string>();
  const holds: HoldStore = {
    ...inner,
    async hold(requestId, s, amount) {
      const r = await inner.hold(requestId, s, amount);
      if (r.ok) live.add(requestId);
      return r;
    },
    async release(requestId, ids, s) {
      live.delete(requestId);
      await inner.release(requestId, ids, s);
    },
  };
  const limits = createRateLimits(undefined, 'faults');
  const keepAlive = createHoldKeepAlive(holds, 20_000, logger);
  const outboxDir = mkdtempSync(join(tmpdir(), 'tollgate-faults-'));
  const outbox = openOutbox(outboxDir);
  const metering: Metering = createMetering({ cp: client, holds, limits, logger, outbox, live: keepAlive, retryMaxMs: 1_000, maxPending: 1_000 });
  let armed: Fault | undefined;
  const pools = new Map<string, Pool>();
  const deps: EdgeDeps = {
    config,
    logger,
    authorizers: { of: () => undefined },
    now: Date.now,
    observe: createEdgeObserver({}),
    routing: createRouting(config.proxy, undefined, undefined, Date.now, logger),
    bodies: bodyWorkOf(config.proxy),
    abandoned: createAbandonedReads(config.proxy.abandonedReadsMax, config.proxy.abandonedReadMs),
    responseIds: createLocalResponseIds(100, 60_000),
    usageWarnings: createUsageWarnings(logger),
    upstreamAuth: createUpstreamAuth({}, logger),
    keys: createKeyCache(client, config.proxy, logger),
    limits,
    holds,
    metering: {
      ...metering,
      settle(call, input, output) {
        if (armed === 'settle') throw new Error('injected: settle');
        return metering.settle(call, input, output);
      },
    },
    pool(origin) {
      if (armed === 'pool') throw new Error('injected: pool');
      let p = pools.get(origin);
      if (!p) pools.set(origin, (p = new Pool(origin)));
      if (armed === 'dispatch') {
        return {
          dispatch() {
            throw new Error('injected: dispatch');
          },
        } as unknown as Pool;
      }
      return p;
    },
  };
  const edge = createEdgeHandler(deps);
  const server: Server = createServer(edge.handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const providers = [...config.models.providers.values()];
  const realUrls = providers.map((p) => [p.endpoints.chat!.base_url, p.endpoints.messages!.base_url] as const);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live,
    keepAlive,
    metering,
    arm(fault: Fault | undefined) {
      armed = fault;
      // Building the upstream call throws on a provider URL that does not parse.
      // An unreachable provider: the discard port, where nothing listens.
      const broken = fault === 'upstream call' ? 'not a url' : fault === 'unreachable' ? 'http://127.0.0.1:9' : undefined;
      providers.forEach((p, i) => {
        p.endpoints.chat!.base_url = broken ?? realUrls[i]![0];
        p.endpoints.messages!.base_url = broken ?? realUrls[i]![1];
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await metering.close(1_000);
      keepAlive.stop();
      for (const p of pools.values()) await p.close();
      await client.close();
      rmSync(outboxDir, { recursive: true, force: true });
    },
  };
}

describeEachStore('faults: a failure after admission releases the hold at once', (store) => {
  let cp: TestControlPlane;
  let fake: FakeUpstream;
  let edge: Awaited<ReturnType<typeof startFaultyEdge>>;
  let k: SeededKey;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    fake = await startFakeUpstream();
    edge = await startFaultyEdge(cp, fake);
  });
  beforeEach(async () => {
    // A budget that fits one call's hold (~1,620 µ$) and not two: a leaked hold would refuse the next call with 402.
    k = await seedKey(cp.deps, { budgetUsd: 0.003 });
  });
  after(async () => {
    await edge.close();
    await fake.close();
    await cp.close();
  });

  for (const fault of ['upstream call', 'pool', 'dispatch'] as const) {
    for (const format of FORMATS) {
      it(`${fault} throwing (${format}): 500 in the format's shape, nothing billed, the hold gone and the next call admitted`, async () => {
        edge.arm(fault);
        const a = await edgeCall(edge.url, format, k.slug, k.secret, modelBody(format, { max_tokens: 100 }));
        expect(a.status, a.text).to.equal(500);
        expect(errorType(format, a)).to.equal(ERROR_TYPES[500][format]);
        await edge.metering.drain();
        expect([...edge.live]).to.deep.equal([]);
        expect(edge.keepAlive.size()).to.equal(0);
        edge.arm(undefined);
        const next = await edgeCall(edge.url, format, k.slug, k.secret, modelBody(format, { max_tokens: 100 }));
        expect(next.status, next.text).to.equal(200);
        await edge.metering.drain();
        expect([...edge.live]).to.deep.equal([]);
      });
    }
  }

  it('settlement throwing after the answer went out: the hold is released, not left for the TTL', async () => {
    const before = await moneyOf(cp.deps, k);
    edge.arm('settle');
    const a = await edgeCall(edge.url, 'chat', k.slug, k.secret, modelBody('chat', { max_tokens: 100 }));
    expect(a.status).to.equal(200);
    await edge.metering.drain();
    expect([...edge.live]).to.deep.equal([]);
    expect(edge.keepAlive.size()).to.equal(0);
    expect((await moneyOf(cp.deps, k)).entries).to.equal(before.entries);
    edge.arm(undefined);
  });

  it('the provider failing before answering, or answering with its own error: released, not billed', async () => {
    const before = await moneyOf(cp.deps, k);
    fake.enqueue({ kind: 'error', status: 529 });
    expect((await edgeCall(edge.url, 'messages', k.slug, k.secret, modelBody('messages'))).status).to.equal(529);
    edge.arm('unreachable');
    expect((await edgeCall(edge.url, 'chat', k.slug, k.secret, modelBody('chat', { max_tokens: 100 }))).status).to.equal(502);
    edge.arm(undefined);
    await edge.metering.drain();
    expect([...edge.live]).to.deep.equal([]);
    expect((await moneyOf(cp.deps, k)).entries).to.equal(before.entries);
  });
});
