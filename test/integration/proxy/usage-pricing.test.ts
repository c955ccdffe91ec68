import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WireFormat } from '../../../proxy/call.js';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { countInputTokens } from '../../support/fake-upstream/index.js';
import type { Behavior } from '../../support/fake-upstream/types.js';
import { TEST_MODELS_FILE } from '../../support/control-plane.js';
import { seedAnotherKey, seedKey, startDataPlane, startTestProxy, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, errorType, modelBody } from '../../support/edge-calls.js';
import { describeEachStore } from '../../support/stores.js';

/**
 * Prices written out in micro-dollars per million tokens (= picodollars per
 * token), apart from the code under test: what the price sheet says each
 * token costs. A cost is Σ tokens × price, in femtodollars (× 1,000).
 */
const SONNET = { input: 3_000_000n, output: 15_000_000n };
const DEFAULTS = { readMessages: 300_000n, readOpenAi: 3_000_000n, write5m: 3_750_000n, write1h: 6_000_000n, searchFemtos: 10_000_000_000_000n };
// The explicit prices of the second proxy's models file (tg/sonnet there).
const EXPLICIT = { read: 500_000n, write5m: 4_000_000n, write1h: 7_000_000n, searchFemtos: 20_000_000_000_000n };

interface Split {
  input: number;
  read?: number;
  write5m?: number;
  write1h?: number;
  output: number;
  searches?: number;
}

function femtos(s: Split, p: { read: bigint; write5m: bigint; write1h: bigint; searchFemtos: bigint }, input = SONNET.input): bigint {
  const pico =
    BigInt(s.input) * input +
    BigInt(s.read ?? 0) * p.read +
    BigInt(s.write5m ?? 0) * p.write5m +
    BigInt(s.write1h ?? 0) * p.write1h +
    BigInt(s.output) * SONNET.output;
  return pico * 1000n + BigInt(s.searches ?? 0) * p.searchFemtos;
}

/** Femtodollars as the ledger's numeric(32,15) text. */
function usdText(f: bigint): string {
  return `${f / 10n ** 15n}.${String(f % 10n ** 15n).padStart(15, '0')}`;
}

interface LedgerRow {
  amount: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  web_search_requests: number;
}

/**
 * Every usage shape a provider reports, driven through the proxy to the fake
 * provider and back to the ledger: the ledger holds what the price sheet
 * says, to the femtodollar, whichever format the client and the provider
 * spoke; a call whose usage costs more than its hold is billed in full and
 * the exhausted key's next call is refused.
 */
describeEachStore('proxy: every usage shape billed at the price sheet, exactly', (store) => {
  let dp: DataPlane;
  let base: SeededKey;
  let explicit: RunningProxy;
  let modelsDir: string;

  before(async function () {
    this.timeout(30_000);
    dp = await startDataPlane(store);
    base = await seedKey(dp.cp.deps, { models: ['tg/sonnet', 'tg/claude-direct', 'tg/gpt-direct'] });
    // A second proxy whose models file gives tg/sonnet every price explicitly.
    modelsDir = mkdtempSync(join(tmpdir(), 'tollgate-prices-'));
    const file = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { models: Record<string, unknown>[] };
    for (const m of file.models) {
      if (m.alias !== 'tg/sonnet') continue;
      Object.assign(m, {
        cache_read_usd_per_mtok: 0.5,
        cache_write_usd_per_mtok: 4,
        cache_write_1h_usd_per_mtok: 7,
        web_search_usd_per_request: 0.02,
      });
    }
    writeFileSync(join(modelsDir, 'models.json'), JSON.stringify(file));
    explicit = await startTestProxy(dp.cp, dp.fake, { MODELS_FILE: join(modelsDir, 'models.json') });
  });
  after(async () => {
    await explicit?.close();
    await dp?.close();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  /** One call on a fresh key, settled, and the ledger row it left. */
  async function billed(
    format: WireFormat,
    body: Record<string, unknown>,
    behavior: Behavior,
    proxy: RunningProxy = dp.proxy,
  ): Promise<{ row: LedgerRow; n: number; answer: Awaited<ReturnType<typeof edgeCall>> }> {
    const key = await seedAnotherKey(dp.cp.deps, base);
    dp.fake.enqueue(behavior);
    const answer = await edgeCall(proxy.url, format, key.slug, key.secret, body);
    expect(answer.status, answer.text).to.equal(200);
    await proxy.drain();
    const rows = await store.db.query<LedgerRow>(
      `SELECT abs(amount_usd)::text AS amount, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, web_search_requests
         FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
      [key.keyId],
    );
    expect(rows).to.have.length(1);
    const sent = dp.fake.requests.at(-1)!.body as Record<string, unknown>;
    return { row: rows[0]!, n: countInputTokens(sent), answer };
  }

  const messagesBody = (extra: Record<string, unknown> = {}) => modelBody('messages', { max_tokens: 200, ...extra });

  it('Messages, whole answer, pass-through: cache reads at 0.1 ×, 5-minute writes at 1.25 × input (the issue’s worked example shape)', async () => {
    const { row, n } = await billed('messages', messagesBody(), { kind: 'ok', outputTokens: 5, cacheReadTokens: 80_000, cacheWrite5mTokens: 3_000 });
    expect(row).to.deep.include({
      input_tokens: n,
      output_tokens: 5,
      cache_read_tokens: 80_000,
      cache_write_tokens: 3_000,
      cache_write_1h_tokens: 0,
    });
    expect(row.amount).to.equal(usdText(femtos({ input: n, read: 80_000, write5m: 3_000, output: 5 }, { ...DEFAULTS, read: DEFAULTS.readMessages })));
  });

  it('Messages, streamed, pass-through: 5-minute and 1-hour writes apart, from message_start', async () => {
    const { row, n } = await billed('messages', messagesBody({ stream: true }), {
      kind: 'ok',
      outputTokens: 100,
      cacheWrite5mTokens: 6_000,
      cacheWrite1hTokens: 4_000,
    });
    expect(row).to.deep.include({ input_tokens: n, output_tokens: 100, cache_write_tokens: 10_000, cache_write_1h_tokens: 4_000 });
    expect(row.amount).to.equal(
      usdText(femtos({ input: n, write5m: 6_000, write1h: 4_000, output: 100 }, { ...DEFAULTS, read: DEFAULTS.readMessages })),
    );
  });

  it('Messages without the 5-minute/1-hour split: every write is a 5-minute write', async () => {
    const { row, n } = await billed('messages', messagesBody({ stream: true }), {
      kind: 'ok',
      outputTokens: 7,
      cacheWrite5mTokens: 2_500,
      cacheSplit: false,
    });
    expect(row).to.deep.include({ cache_write_tokens: 2_500, cache_write_1h_tokens: 0 });
    expect(row.amount).to.equal(usdText(femtos({ input: n, write5m: 2_500, output: 7 }, { ...DEFAULTS, read: DEFAULTS.readMessages })));
  });

  it('Messages web searches at $0.01 each, whole and streamed', async () => {
    for (const stream of [false, true]) {
      const { row, n } = await billed('messages', messagesBody({ stream }), { kind: 'ok', outputTokens: 9, webSearches: 3 });
      expect(row.web_search_requests).to.equal(3);
      expect(row.amount).to.equal(usdText(femtos({ input: n, output: 9, searches: 3 }, { ...DEFAULTS, read: DEFAULTS.readMessages })));
    }
  });

  it('Chat, pass-through, whole and streamed: cached_tokens are part of prompt_tokens, read at the input price by default', async () => {
    const long = { messages: [{ role: 'user', content: 'cache me '.repeat(400) }], max_tokens: 50 };
    for (const stream of [false, true]) {
      const { row, n } = await billed(
        'chat',
        modelBody('chat', { ...long, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }),
        {
          kind: 'ok',
          outputTokens: 20,
          cachedTokens: 600,
        },
      );
      expect(n).to.be.above(600);
      expect(row).to.deep.include({ input_tokens: n - 600, cache_read_tokens: 600, output_tokens: 20 });
      expect(row.amount).to.equal(usdText(femtos({ input: n - 600, read: 600, output: 20 }, { ...DEFAULTS, read: DEFAULTS.readOpenAi })));
    }
  });

  it('explicit prices: cache reads, both writes and searches at the models file’s prices, on Messages and Chat', async () => {
    const m = await billed(
      'messages',
      messagesBody({ stream: true }),
      { kind: 'ok', outputTokens: 11, cacheReadTokens: 1_000, cacheWrite5mTokens: 200, cacheWrite1hTokens: 300, webSearches: 2 },
      explicit,
    );
    expect(m.row.amount).to.equal(usdText(femtos({ input: m.n, read: 1_000, write5m: 200, write1h: 300, output: 11, searches: 2 }, EXPLICIT)));
    const long = { messages: [{ role: 'user', content: 'cache me '.repeat(400) }], max_tokens: 50 };
    const c = await billed('chat', modelBody('chat', long), { kind: 'ok', outputTokens: 20, cachedTokens: 600 }, explicit);
    expect(c.row.amount).to.equal(usdText(femtos({ input: c.n - 600, read: 600, output: 20 }, EXPLICIT)));
  });

  it('translated: a Chat client on a Messages-only provider is billed in the provider’s terms (reads at 0.1 ×)', async () => {
    const body = modelBody('chat', { model: 'tg/claude-direct', max_tokens: 50, stream: true, stream_options: { include_usage: true } });
    const { row, n } = await billed('chat', body, { kind: 'ok', outputTokens: 6, cacheReadTokens: 80_000, cacheWrite1hTokens: 1_000 });
    expect(row).to.deep.include({ input_tokens: n, cache_read_tokens: 80_000, cache_write_1h_tokens: 1_000 });
    expect(row.amount).to.equal(usdText(femtos({ input: n, read: 80_000, write1h: 1_000, output: 6 }, { ...DEFAULTS, read: DEFAULTS.readMessages })));
  });

  it('translated: a Messages client on a Chat-only provider is billed in the provider’s terms (reads at the input price)', async () => {
    const body = modelBody('messages', { model: 'tg/gpt-direct', max_tokens: 50, messages: [{ role: 'user', content: 'cache me '.repeat(400) }] });
    const { row, n } = await billed('messages', body, { kind: 'ok', outputTokens: 8, cachedTokens: 500 });
    expect(row).to.deep.include({ input_tokens: n - 500, cache_read_tokens: 500 });
    expect(row.amount).to.equal(usdText(femtos({ input: n - 500, read: 500, output: 8 }, { ...DEFAULTS, read: DEFAULTS.readOpenAi })));
  });

  it('a call whose usage costs more than its hold is billed in full; the exhausted key’s next call is refused (402)', async () => {
    // A budget of 2,000 µ$ admits the call (its hold is about 1,100 µ$); three searches cost 30,000 µ$ more.
    const key = await seedAnotherKey(dp.cp.deps, base, { budgetUsd: 0.002 });
    dp.fake.enqueue({ kind: 'ok', outputTokens: 4, webSearches: 3 });
    const first = await edgeCall(dp.proxy.url, 'messages', key.slug, key.secret, modelBody('messages'));
    expect(first.status, first.text).to.equal(200);
    await dp.proxy.drain();
    const n = countInputTokens(dp.fake.requests.at(-1)!.body as Record<string, unknown>);
    const cost = femtos({ input: n, output: 4, searches: 3 }, { ...DEFAULTS, read: DEFAULTS.readMessages });
    const [row] = await store.db.query<{ amount: string; spend: string; budget: string }>(
      `SELECT abs(l.amount_usd)::text AS amount, k.spend_usd::text AS spend, k.budget_usd::text AS budget
         FROM ledger_entries l JOIN api_keys k ON k.id = l.key_id WHERE l.key_id = $1 AND l.kind = 'usage'`,
      [key.keyId],
    );
    expect(row!.amount).to.equal(usdText(cost));
    expect(Number(row!.spend)).to.be.above(Number(row!.budget));
    const sent = dp.fake.requests.length;
    const second = await edgeCall(dp.proxy.url, 'messages', key.slug, key.secret, modelBody('messages'));
    expect(second.status, second.text).to.equal(402);
    expect(errorType('messages', second)).to.equal('billing_error');
    // Refused before the provider: nothing more was spent.
    expect(dp.fake.requests).to.have.length(sent);
  });
});
