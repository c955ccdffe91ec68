import { expect } from 'chai';
import { describeEachStore, type StoreContext } from '../../support/stores.js';
import { recordedInputTokens } from '../../support/fake-upstream/index.js';
import { seedKey, startDataPlane, startTestProxy, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeRequest, modelBody } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';

/**
 * A client that leaves does not end the bill (docs/proxy.md, "A client that
 * leaves"): the proxy reads the provider's answer on, unrelayed, and bills
 * what the provider reports, logged 499.
 */

interface UsageRow {
  input_tokens: number;
  output_tokens: number;
  status: number | null;
  amount: string;
}

/** Each format on a provider that speaks it (Responses and Gemini on their own providers), and those two translated. */
const CASES: { name: string; format: WireFormat; model: string }[] = [
  { name: 'Chat Completions', format: 'chat', model: 'tg/sonnet' },
  { name: 'Messages', format: 'messages', model: 'tg/sonnet' },
  { name: 'Responses', format: 'responses', model: 'tg/gpt-responses' },
  { name: 'Responses translated to Chat', format: 'responses', model: 'tg/sonnet' },
  { name: 'Gemini', format: 'gemini', model: 'tg/gemini-direct' },
  { name: 'Gemini translated to Chat', format: 'gemini', model: 'tg/sonnet' },
];

function open(dp: DataPlane, format: WireFormat, k: SeededKey, body: unknown, signal: AbortSignal): Promise<Response> {
  const { url, init } = edgeRequest(dp.proxy.url, format, k.slug, k.secret, body, { signal });
  return fetch(url, init);
}

/** The key's usage rows once its call has ended and been settled (the call ends after the client has gone, so it is waited for). */
async function usageRows(dp: DataPlane, store: StoreContext, k: SeededKey): Promise<UsageRow[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await dp.proxy.drain();
    const rows = await store.db.query<UsageRow>(
      `SELECT input_tokens, output_tokens, status, abs(amount_usd)::text AS amount FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
      [k.keyId],
    );
    if (rows.length || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Abandons a call: a stream after its first bytes, a whole answer once the provider has the request. */
async function abandon(dp: DataPlane, format: WireFormat, k: SeededKey, body: Record<string, unknown>): Promise<void> {
  const abort = new AbortController();
  const answer = open(dp, format, k, body, abort.signal);
  if (body.stream === true) {
    const res = await answer;
    expect(res.status).to.equal(200);
    const first = await res.body!.getReader().read();
    expect(first.value?.length ?? 0).to.be.greaterThan(0);
  } else {
    await dp.fake.waitForRequests(1);
    answer.catch(() => undefined);
  }
  abort.abort();
}

/** Edge requests answered with a status of this class, over every label set. */
async function requestsOfClass(dp: DataPlane, statusClass: string): Promise<number> {
  const text = await dp.proxy.metrics!.getSingleMetricAsString('tollgate_proxy_requests_total');
  return text
    .split('\n')
    .filter((l) => l.startsWith('tollgate_proxy_requests_total{') && l.includes(`status_class="${statusClass}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

async function metric(dp: DataPlane, ended: string): Promise<number> {
  const text = await dp.proxy.metrics!.getSingleMetricAsString('tollgate_proxy_abandoned_reads_total');
  const line = text.split('\n').find((l) => l.startsWith(`tollgate_proxy_abandoned_reads_total{ended="${ended}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describeEachStore('proxy: a client that leaves is billed what the provider reports', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const c of CASES) {
    for (const stream of [false, true]) {
      it(`${c.name}, ${stream ? 'streamed, left after the first bytes' : 'not streamed, left while the provider generates'}: read to the end, billed the provider's usage, 499`, async () => {
        const k = await seedKey(dp.cp.deps, { models: [c.model] });
        const before = await metric(dp, 'complete');
        const clientErrors = await requestsOfClass(dp, '4xx');
        // Slow enough that the client is gone long before the answer ends: 40 tokens, 25 ms apart.
        dp.fake.enqueue({ kind: 'ok', outputTokens: 40, eventDelayMs: 25 });
        await abandon(dp, c.format, k, modelBody(c.format, { model: c.model, stream, max_tokens: 2000 }));
        await dp.fake.idle();
        const sent = dp.fake.requests.at(-1)!;
        expect(sent.aborted, 'the proxy read the answer to its end').to.equal(false);
        const rows = await usageRows(dp, store, k);
        expect(rows).to.have.length(1);
        expect(rows[0]).to.deep.include({ input_tokens: recordedInputTokens(sent), output_tokens: 40, status: 499 });
        expect(Number(rows[0]!.amount)).to.be.greaterThan(0);
        expect(await metric(dp, 'complete')).to.equal(before + 1);
        // Counted (and logged) as the client's 499, never as the provider's 5xx.
        expect(await requestsOfClass(dp, '4xx')).to.equal(clientErrors + 1);
      });
    }
  }
});

describeEachStore('proxy: abandoned reads are bounded per proxy', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_ABANDONED_READS_MAX: '1', PROXY_ABANDONED_READ_MS: '800' } });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  it('a read past its time is cut and billed the hold (the estimate and the output ceiling), 499', async () => {
    const k = await seedKey(dp.cp.deps);
    dp.fake.enqueue({ kind: 'stall', when: 'after-first-event' });
    await abandon(dp, 'chat', k, modelBody('chat', { stream: true, max_tokens: 300 }));
    await dp.fake.idle();
    expect(dp.fake.requests.at(-1)!.aborted, 'cut at the read limit').to.equal(true);
    const rows = await usageRows(dp, store, k);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ output_tokens: 300, status: 499 });
    expect(await metric(dp, 'timeout')).to.be.greaterThan(0);
  });

  it('over the limit of reads at once, an abandoned call is cut at once and billed the hold', async () => {
    const first = await seedKey(dp.cp.deps);
    const second = await seedKey(dp.cp.deps);
    dp.fake.enqueue({ kind: 'stall', when: 'after-first-event' }, { kind: 'stall', when: 'after-first-event' });
    await abandon(dp, 'chat', first, modelBody('chat', { stream: true, max_tokens: 300 }));
    await abandon(dp, 'chat', second, modelBody('chat', { stream: true, max_tokens: 200 }));
    await dp.fake.idle();
    expect(dp.fake.requests.map((r) => r.aborted)).to.deep.equal([true, true]);
    expect((await usageRows(dp, store, second))[0]).to.deep.include({ output_tokens: 200, status: 499 });
    expect((await usageRows(dp, store, first))[0]).to.deep.include({ output_tokens: 300, status: 499 });
    expect(await metric(dp, 'over_limit')).to.equal(1);
  });

  it('shutdown cuts an answer still read on at its deadline (billed the hold) instead of waiting out the read', async () => {
    const proxy = await startTestProxy(dp.cp, dp.fake, { PROXY_ABANDONED_READ_MS: '600000' });
    const k = await seedKey(dp.cp.deps);
    dp.fake.enqueue({ kind: 'stall', when: 'after-first-event' });
    await abandon({ ...dp, proxy }, 'chat', k, modelBody('chat', { stream: true, max_tokens: 250 }));
    const started = Date.now();
    await proxy.close(300);
    expect(Date.now() - started).to.be.lessThan(8_000);
    const rows = await store.db.query<UsageRow>(`SELECT output_tokens, status FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`, [k.keyId]);
    expect(rows).to.deep.equal([{ output_tokens: 250, status: 499 }]);
  });
});
