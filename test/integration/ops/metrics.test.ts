import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createMetricsRegistry, startMetricsServer, type MetricsServer, type Registry } from '../../../shared/metrics.js';
import { describeEachStore } from '../../support/stores.js';
import {
  creditWorkspace,
  moneyOf,
  seedAnotherKey,
  seedKey,
  startDataPlane,
  UPSTREAM_SECRET,
  type DataPlane,
  type SeededKey,
} from '../../support/data-plane.js';
import { edgeCall, FORMATS, modelBody } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';
import { call } from '../../support/control-plane.js';
import { seedScimOrg, userBody } from '../../support/scim.js';
import { scrape, total, type Sample } from '../../support/prometheus.js';

const TOKEN = 'metrics-token-for-the-test-0123456789';
const PROMPT = 'Say hello to the proxy.';
/** The format of the rpm key's two calls (one answered, one refused). */
const RPM_FORMAT: WireFormat = 'chat';

describeEachStore('metrics: /metrics counts real traffic on both halves', (store) => {
  let dp: DataPlane;
  let proxyMetrics: MetricsServer;
  let cpMetrics: MetricsServer;
  let key: SeededKey;
  let tight: SeededKey;
  let slow: SeededKey;
  let proxy: Sample[];
  let afterChange: Sample[];
  let cp: Sample[];
  let scimToken: string;
  let cpRegistry: Registry;

  before(async function () {
    this.timeout(60_000);
    cpRegistry = createMetricsRegistry();
    dp = await startDataPlane(store, { controlPlaneRegistry: cpRegistry });
    proxyMetrics = await startMetricsServer(dp.proxy.metrics!, { host: '127.0.0.1', port: 0, token: TOKEN });
    cpMetrics = await startMetricsServer(cpRegistry, { host: '127.0.0.1', port: 0, token: undefined });
    key = await seedKey(dp.cp.deps);
    // A budget far below any call's worst case: refused for the budget.
    tight = await seedAnotherKey(dp.cp.deps, key, { budgetUsd: 0.000001 });
    slow = await seedAnotherKey(dp.cp.deps, key, { rpm: 1 });

    for (const format of FORMATS) {
      for (const stream of [false, true]) {
        const answer = await edgeCall(dp.proxy.url, format, key.slug, key.secret, modelBody(format, { stream }));
        expect(answer.status, answer.text).to.equal(200);
      }
      expect((await edgeCall(dp.proxy.url, format, key.slug, 'tg_not_a_key', modelBody(format))).status).to.equal(401);
      expect((await edgeCall(dp.proxy.url, format, key.slug, tight.secret, modelBody(format))).status).to.equal(402);
      dp.fake.enqueue({ kind: 'error', status: 529 });
      expect((await edgeCall(dp.proxy.url, format, key.slug, key.secret, modelBody(format))).status).to.equal(529);
    }
    expect((await edgeCall(dp.proxy.url, RPM_FORMAT, key.slug, slow.secret, modelBody(RPM_FORMAT))).status).to.equal(200);
    expect((await edgeCall(dp.proxy.url, RPM_FORMAT, key.slug, slow.secret, modelBody(RPM_FORMAT))).status).to.equal(429);
    await dp.proxy.drain();
    proxy = await scrape(proxyMetrics.url, TOKEN);
    // A change the proxy hears of (pushed, or polled within a second); wait until it has.
    await creditWorkspace(dp.cp.deps, key.workspaceId, 1);
    afterChange = await scrape(proxyMetrics.url, TOKEN);
    for (let i = 0; i < 50 && total(afterChange, 'tollgate_proxy_key_invalidations_total') === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      afterChange = await scrape(proxyMetrics.url, TOKEN);
    }

    const scimOrg = await seedScimOrg(dp.cp);
    scimToken = scimOrg.token;
    expect((await scimOrg.scim('POST', '/Users', userBody('ada@example.test'))).status).to.equal(201);
    expect((await scimOrg.scim('POST', '/Users', { schemas: [] })).status).to.equal(400);
    // A callback with no login behind it is a failed sign-in.
    expect((await call(`${dp.cp.url}/v1/auth/sso/callback?state=nothing&code=nothing`)).status).to.be.greaterThanOrEqual(400);

    cp = await scrape(cpMetrics.url);
  });
  after(async () => {
    await proxyMetrics?.close();
    await cpMetrics?.close();
    await dp?.close();
  });

  it('answers /metrics only with the bearer token when one is set', async () => {
    expect((await fetch(`${proxyMetrics.url}/metrics`)).status).to.equal(401);
    expect((await fetch(`${proxyMetrics.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).to.equal(401);
    const ok = await fetch(`${proxyMetrics.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  });

  for (const format of FORMATS) {
    it(`${format}: counts answered calls, streamed and not, with their duration, time to first byte and upstream time`, () => {
      const ok = { format, route: 'call', model: 'tg/sonnet', provider: 'primary', status_class: '2xx' };
      // Two answered by the key, plus (in its format) the rpm key's first call.
      const answered = format === RPM_FORMAT ? 3 : 2;
      expect(total(proxy, 'tollgate_proxy_requests_total', ok)).to.equal(answered);
      expect(total(proxy, 'tollgate_proxy_request_duration_seconds_count', ok)).to.equal(answered);
      expect(total(proxy, 'tollgate_proxy_time_to_first_byte_seconds_count', { format, stream: 'true' })).to.equal(1);
      expect(total(proxy, 'tollgate_proxy_time_to_first_byte_seconds_count', { format, stream: 'false' })).to.equal(answered);
      expect(total(proxy, 'tollgate_proxy_upstream_duration_seconds_count', { format, outcome: 'complete' })).to.equal(answered);
    });

    it(`${format}: a provider error is a 5xx with an upstream-error outcome, not a refusal`, () => {
      expect(total(proxy, 'tollgate_proxy_requests_total', { format, model: 'tg/sonnet', status_class: '5xx' })).to.equal(1);
      expect(total(proxy, 'tollgate_proxy_upstream_duration_seconds_count', { format, outcome: 'upstream-error' })).to.equal(1);
    });

    it(`${format}: refusals are counted by reason; an unknown key names no model`, () => {
      expect(total(proxy, 'tollgate_proxy_refusals_total', { format, reason: 'unauthenticated' })).to.equal(1);
      expect(total(proxy, 'tollgate_proxy_refusals_total', { format, reason: 'insufficient_funds_budget' })).to.equal(1);
      expect(total(proxy, 'tollgate_proxy_requests_total', { format, model: 'none', status_class: '4xx' })).to.equal(1);
    });
  }

  it('counts a rate-limit refusal by which limit refused it', () => {
    expect(total(proxy, 'tollgate_proxy_refusals_total', { format: RPM_FORMAT, reason: 'rate_limited_requests' })).to.equal(1);
  });

  // Two answered calls (streamed and not) per format, and the rpm key's first call.
  const SETTLED = FORMATS.length * 2 + 1;

  it('tokens and spend add up to what the ledger recorded', async () => {
    const money = await moneyOf(dp.cp.deps, key);
    const slowMoney = await moneyOf(dp.cp.deps, slow);
    const spentMicros = Math.round((money.spend + slowMoney.spend) * 1_000_000);
    expect(total(proxy, 'tollgate_proxy_spend_micros_total')).to.equal(spentMicros);
    expect(total(proxy, 'tollgate_proxy_tokens_total', { direction: 'output' })).to.equal(12 * SETTLED);
    expect(total(proxy, 'tollgate_proxy_tokens_total', { direction: 'input' })).to.be.greaterThan(0);
  });

  it('follows settlement to the ledger: lag per settled call, nothing queued, no hold outstanding', () => {
    expect(total(proxy, 'tollgate_proxy_settlement_lag_seconds_count')).to.equal(SETTLED);
    expect(total(proxy, 'tollgate_proxy_settlement_queue_depth')).to.equal(0);
    expect(total(proxy, 'tollgate_proxy_holds_outstanding')).to.equal(0);
    expect(total(proxy, 'tollgate_proxy_control_plane_up')).to.equal(1);
  });

  it('counts change events applied to the key cache, with how late they arrived', () => {
    expect(total(afterChange, 'tollgate_proxy_key_invalidations_total')).to.be.greaterThanOrEqual(1);
    expect(total(afterChange, 'tollgate_proxy_invalidation_lag_seconds_count')).to.equal(
      total(afterChange, 'tollgate_proxy_key_invalidations_total'),
    );
    // The workspace's keys were dropped from the cache.
    expect(total(afterChange, 'tollgate_proxy_key_cache_entries')).to.be.lessThan(total(proxy, 'tollgate_proxy_key_cache_entries'));
  });

  it('reports key cache hits, misses and size', () => {
    expect(total(proxy, 'tollgate_proxy_key_cache_lookups_total', { result: 'miss' })).to.be.greaterThanOrEqual(3);
    expect(total(proxy, 'tollgate_proxy_key_cache_lookups_total', { result: 'hit' })).to.be.greaterThan(0);
    expect(total(proxy, 'tollgate_proxy_key_cache_entries')).to.be.greaterThanOrEqual(3);
  });

  it('every metric the Grafana dashboard queries is one the halves export', async () => {
    const dashboard = readFileSync(new URL('../../../deploy/grafana/tollgate.json', import.meta.url), 'utf8');
    const queried = new Set([...dashboard.matchAll(/tollgate_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')));
    const exported = new Set([...(await dp.proxy.metrics!.getMetricsAsJSON()), ...(await cpRegistry.getMetricsAsJSON())].map((m) => m.name));
    expect(queried.size).to.be.greaterThan(15);
    for (const name of queried) expect(exported.has(name), name).to.equal(true);
  });

  it('no label value holds a key, a token, an id or the prompt', () => {
    const secrets = [key.secret, tight.secret, slow.secret, UPSTREAM_SECRET, TOKEN, scimToken, dp.cp.deps.config.dataPlaneToken];
    const ids = [key.keyId, key.workspaceId, key.orgId, key.teamId, key.slug];
    const values = [...new Set([...proxy, ...cp].flatMap((s) => Object.values(s.labels)))];
    expect(values.length).to.be.greaterThan(20);
    for (const value of values) {
      for (const secret of secrets) expect(value).not.to.include(secret.slice(0, 12));
      for (const id of ids) expect(value).not.to.include(id);
      expect(value).not.to.include(PROMPT);
      expect(value).not.to.match(/^tg_|sk-/);
    }
  });

  it('control plane: SCIM operations by method and outcome, SSO sign-ins, console and internal requests, store latency', () => {
    expect(total(cp, 'tollgate_cp_scim_operations_total', { method: 'POST', resource: 'Users', outcome: 'success' })).to.equal(1);
    expect(total(cp, 'tollgate_cp_scim_operations_total', { method: 'POST', resource: 'Users', outcome: 'client_error' })).to.equal(1);
    expect(total(cp, 'tollgate_cp_sso_logins_total', { outcome: 'failure' })).to.equal(1);
    expect(total(cp, 'tollgate_cp_http_requests_total', { surface: 'console', method: 'PUT', status_class: '2xx' })).to.be.greaterThanOrEqual(1);
    expect(
      total(cp, 'tollgate_cp_http_requests_total', { surface: 'internal', route: '/internal/usage', status_class: '2xx' }),
    ).to.be.greaterThanOrEqual(1);
    expect(total(cp, 'tollgate_cp_db_query_duration_seconds_count', { statement: 'select', outcome: 'ok' })).to.be.greaterThan(0);
    expect(total(cp, 'tollgate_cp_db_query_duration_seconds_count', { statement: 'transaction', outcome: 'ok' })).to.be.greaterThan(0);
    if (store.name === 'postgres') expect(total(cp, 'tollgate_cp_db_pool_connections', { state: 'total' })).to.be.greaterThan(0);
  });
});
