import { expect } from 'chai';
import { usageReportSchema, type UsageReport, type UsageResult } from '../../../../shared/contract/usage.js';
import { plainUsage } from '../../../../proxy/call.js';
import { ControlPlaneUnavailable } from '../../../../proxy/control-plane-client.js';
import { costMicros } from '../../../../proxy/money/cost.js';
import { createMemoryHoldStore, type MoneySnapshot } from '../../../../proxy/money/holds.js';
import { createHoldKeepAlive } from '../../../../proxy/money/keep-alive.js';
import { createMetering, type HeldCall } from '../../../../proxy/money/metering.js';
import type { Outbox, OutboxEntry, OutboxRecord, OutboxSlot } from '../../../../proxy/money/outbox.js';
import type { RateLimits } from '../../../../proxy/rate-limits.js';
import { createRefusalCounter, type RefusedCall } from '../../../../proxy/money/refusals.js';
import { reportJson } from '../../../../proxy/money/record-json.js';
import { testConfig } from '../../../support/control-plane.js';
import { KEY, perKey, quietLogger, record, reportsOf, result } from './fakes.js';

const SONNET = testConfig().models.models.get('tg/sonnet')!;
const SNAPSHOT: MoneySnapshot = {
  workspaceId: 'ws1',
  balanceMicros: 1_000_000,
  balanceVersion: 1,
  keyId: KEY,
  keyRemainingMicros: null,
  keyVersion: 0,
};

function held(n: number, over: Partial<HeldCall> = {}): HeldCall {
  return {
    requestId: `req_${n}`,
    keyId: KEY,
    workspaceId: 'ws1',
    tpm: 1_000,
    model: SONNET,
    holdMicros: 100_000,
    inputEstimate: 10,
    tokensTaken: 10,
    keyBudget: false,
    format: 'chat',
    startedMs: performance.now(),
    ...over,
  };
}

/** An outbox in memory: what was appended and acknowledged, and what an earlier run left. */
function memoryOutbox(replayed: { record: OutboxRecord; slot: OutboxSlot }[] = [], disk = { full: false }) {
  const appended: OutboxEntry[] = [];
  const acked: number[] = [];
  const outbox: Outbox = {
    replayed,
    pending: () => appended.length - acked.reduce((a, b) => a + b, 0),
    append: (records) => (disk.full ? Promise.reject(new Error('ENOSPC')) : (appended.push(...records), Promise.resolve({ segment: 1 }))),
    probe: () => (disk.full ? Promise.reject(new Error('ENOSPC')) : Promise.resolve()),
    ack: (_slot, count) => (acked.push(count), Promise.resolve()),
    close: () => Promise.resolve(),
  };
  return { outbox, appended, acked };
}

function metering(
  opts: {
    answer?: (r: UsageReport[]) => Promise<UsageResult[]>;
    replayed?: { record: OutboxRecord; slot: OutboxSlot }[];
    maxPending?: number;
    disk?: { full: boolean };
  } = {},
) {
  const reported: UsageReport[] = [];
  const tokens: number[] = [];
  const holds = createMemoryHoldStore(60_000);
  const logger = quietLogger();
  const live = createHoldKeepAlive(holds, 10_000, logger);
  const limits: RateLimits = { admit: () => ({ ok: true }), adjustTokens: (_k, _tpm, delta) => void tokens.push(delta) };
  const { outbox, appended, acked } = memoryOutbox(opts.replayed, opts.disk);
  const m = createMetering({
    cp: {
      async reportUsage(sent) {
        const reports = reportsOf(sent);
        reported.push(...reports);
        const results = await (opts.answer
          ? opts.answer(reports)
          : Promise.resolve(reports.map((r) => result(r, { balance_micros: 999_000, balance_version: 2 }))));
        return perKey(reports, results);
      },
    },
    holds,
    limits,
    logger,
    outbox,
    live,
    retryMaxMs: 1_000,
    maxPending: opts.maxPending ?? 1_000,
    diskProbeMs: 5,
  });
  /** Admits a call as the hold step does: the hold on the store, then metering told it is owed. */
  const admit = (call: HeldCall) => {
    expect(holds.hold(call.requestId, SNAPSHOT, call.holdMicros)).to.deep.equal({ ok: true });
    m.admitted(call);
  };
  /** Whether `amount` more could be held on the workspace now. */
  const room = (amount: number) => {
    const out = holds.hold('probe', { ...SNAPSHOT, balanceVersion: 0 }, amount);
    void holds.release('probe', { workspaceId: 'ws1', keyId: KEY });
    return (out as { ok: boolean }).ok;
  };
  return { m, holds, live, logger, reported, tokens, appended, acked, admit, room };
}

describe('money: metering (bill once, then release)', () => {
  it('bills a settled call at its model price, reports it with its status, corrects the token window, then releases the hold with the new snapshot', async () => {
    const { m, admit, reported, tokens, acked, live, room } = metering();
    const call = held(1);
    admit(call);
    expect(live.size()).to.equal(1);
    const cost = m.settle(call, plainUsage(100, 50), 'chat', 499);
    expect(cost).to.equal(costMicros(SONNET, 100, 50));
    expect(tokens).to.deep.equal([100 + 50 - 10]);
    await m.drain();
    expect(reported).to.have.length(1);
    expect(reported[0]).to.deep.include({
      request_id: 'req_1',
      input_tokens: 100,
      output_tokens: 50,
      cost_micros: cost,
      status: 499,
      format: 'chat',
    });
    expect(acked).to.deep.equal([1]);
    expect(live.size()).to.equal(0);
    // The control plane's balance (999,000, a newer version) is what the store holds against now.
    expect(room(999_000)).to.equal(true);
    expect(room(999_001)).to.equal(false);
    await m.close(0);
  });

  it('bills what the usage costs even above the hold (the hold is a reservation, not a cap), and never less than one input token', () => {
    const { m, logger } = metering();
    expect(m.settle(held(1, { holdMicros: 50 }), plainUsage(1_000_000, 1_000_000), 'chat')).to.equal(costMicros(SONNET, 1_000_000, 1_000_000));
    expect(logger.warnings).to.deep.equal([]);
    expect(m.settle(held(2), plainUsage(0, 0), 'chat')).to.equal(costMicros(SONNET, 1, 0));
  });

  it('a released call hands its hold and its tokens back at once and is still recorded, at no cost', async () => {
    const { m, admit, reported, tokens, live, room } = metering({
      answer: (reports) => Promise.resolve(reports.map((r) => result(r, { balance_micros: 1_000_000, balance_version: 1 }))),
    });
    const call = held(1, { holdMicros: 1_000_000 });
    admit(call);
    expect(room(1)).to.equal(false);
    m.release(call, 502);
    expect(live.size()).to.equal(0);
    await m.drain();
    expect(room(1_000_000)).to.equal(true);
    expect(tokens).to.deep.equal([-10]);
    expect(reported).to.have.length(1);
    expect(reported[0]).to.deep.include({ request_id: 'req_1', input_tokens: 0, output_tokens: 0, cost_micros: 0, status: 502 });
  });

  it('is full once maxPending settlements wait for the control plane, and not once they are recorded', async () => {
    let up = false;
    const { m } = metering({
      maxPending: 2,
      answer: (reports) => (up ? Promise.resolve(reports.map((r) => result(r))) : Promise.reject(new ControlPlaneUnavailable('down'))),
    });
    m.settle(held(1), plainUsage(1, 1), 'chat');
    expect(m.full()).to.equal(false);
    m.settle(held(2), plainUsage(1, 1), 'chat');
    expect(m.full()).to.equal(true);
    up = true;
    m.wake();
    await m.drain();
    expect(m.full()).to.equal(false);
  });

  it('is full while the outbox disk refuses writes (the call is still billed), and not once a probe write succeeds', async () => {
    const disk = { full: true };
    const { m, reported } = metering({ disk });
    m.settle(held(1), plainUsage(1, 1), 'chat');
    await m.drain();
    expect(
      reported.map((r) => r.request_id),
      'sent although not durable',
    ).to.deep.equal(['req_1']);
    expect(m.full()).to.equal(true);
    await new Promise((r) => setTimeout(r, 30));
    expect(m.full(), 'still full: the probe fails too').to.equal(true);
    disk.full = false;
    await new Promise((r) => setTimeout(r, 30));
    expect(m.full()).to.equal(false);
    await m.close(10);
  });

  it('on start, holds what an earlier run left unacknowledged again (record-only calls hold nothing), then reports it', async () => {
    const billed = record(1);
    const recordOnly: OutboxRecord = { ...record(2), recordOnly: true };
    const { m, reported, live, acked, room } = metering({ replayed: [billed, recordOnly].map((r) => ({ record: r, slot: { segment: 0 } })) });
    // The replayed hold (100 micros) is not released until the control plane answers: hold it up.
    let answer!: () => void;
    const {
      m: m2,
      live: live2,
      room: room2,
      reported: reported2,
    } = metering({
      replayed: [{ record: billed, slot: { segment: 0 } }],
      answer: (reports) => new Promise((r) => (answer = () => r(reports.map((x) => result(x, { balance_micros: 1_000_000, balance_version: 0 }))))),
    });
    await m2.start();
    expect(live2.list().map((h) => h.requestId)).to.deep.equal(['req_1']);
    expect(room2(1_000_000)).to.equal(false);
    await new Promise((r) => setTimeout(r, 10));
    expect(reported2.map((r) => r.request_id)).to.deep.equal(['req_1']);
    answer();
    await m2.drain();
    expect(live2.size()).to.equal(0);
    expect(room2(1_000_000)).to.equal(true);

    await m.start();
    await m.drain();
    expect(reported.map((r) => r.request_id)).to.deep.equal(['req_1', 'req_2']);
    expect(acked).to.deep.equal([2]);
    expect(live.size()).to.equal(0);
    expect(room(999_000)).to.equal(true);
  });

  it('close() gives up after its time when the control plane is down, leaving the usage in the outbox', async () => {
    const { m, logger, acked } = metering({ answer: () => Promise.reject(new ControlPlaneUnavailable('down')) });
    m.settle(held(1), plainUsage(1, 1), 'chat');
    const started = Date.now();
    await m.close(100);
    expect(Date.now() - started).to.be.below(2_000);
    expect(acked).to.deep.equal([]);
    expect(logger.warnings).to.include('usage left in the outbox for the next start');
  });
});

describe('money: refusals ride the usage path, counted, never owed', () => {
  const refusal = (n: number, over: Partial<RefusedCall> = {}): RefusedCall => ({
    requestId: `ref_${n}`,
    keyId: KEY,
    workspaceId: 'ws1',
    model: 'tg/sonnet',
    reason: 'rate_limit',
    format: 'chat',
    status: 429,
    startedAtMs: Date.now(),
    ...over,
  });

  it('a burst of one key’s refusals is one report with its count, through the outbox; each other reason or model its own', async () => {
    const { m, reported, appended } = metering();
    for (let i = 0; i < 500; i++) m.refused(refusal(i));
    m.refused(refusal(900, { reason: 'budget', status: 402 }));
    m.refused(refusal(901, { model: '', reason: 'key', status: 401 }));
    await m.drain();
    expect(appended).to.have.length(3);
    expect(appended.every((e) => e.refusal && e.recordOnly)).to.equal(true);
    const byReason = Object.fromEntries(reported.map((r) => [r.refusal_reason, r]));
    expect(byReason.rate_limit).to.deep.include({ request_id: 'ref_0', refused_count: 500, cost_micros: 0, input_tokens: 0, status: 429 });
    expect(byReason.budget).to.deep.include({ request_id: 'ref_900', refused_count: 1, status: 402 });
    expect(byReason.key).to.deep.include({ model: '', refused_count: 1 });
    // What the proxy sends is what the control plane accepts.
    for (const r of reported) expect(usageReportSchema.safeParse(r).success, JSON.stringify(r)).to.equal(true);
    await m.close(0);
  });

  it('refusals waiting on a control plane that is down never fill the settlement room (no 503 for want of it)', async () => {
    const { m, appended } = metering({ answer: () => Promise.reject(new ControlPlaneUnavailable('down')), maxPending: 2 });
    for (let i = 0; i < 5; i++) m.refused(refusal(i, { keyId: `00000000-0000-4000-8000-00000000001${i}` }));
    // One report window, then the batcher's gathering: all five groups are on their way, none acknowledged.
    for (let waited = 0; appended.length < 5 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(appended).to.have.length(5);
    expect(m.full()).to.equal(false);
    await m.close(0);
  });

  it('past its groups per window the counter drops and says so, rather than grow with a flood', () => {
    const reports: UsageReport[] = [];
    const logger = quietLogger();
    const counter = createRefusalCounter({ logger, report: (r) => void reports.push(r), maxGroups: 3, windowMs: 60_000 });
    for (let i = 0; i < 10; i++) counter.count(refusal(i, { model: `m${i}` }));
    counter.count(refusal(20, { model: 'm0' }));
    expect(counter.pending()).to.equal(3);
    counter.flush();
    expect(reports.map((r) => [r.model, r.refused_count])).to.deep.equal([
      ['m0', 2],
      ['m1', 1],
      ['m2', 1],
    ]);
    expect(logger.warnings.join('\n')).to.include('refusals past the per-window limit');
    counter.stop();
  });
});

describe('money: a usage report serialized once (record-json)', () => {
  it('keeps every field of a billed call, a record-only call and a refusal, the start time included', () => {
    const base: UsageReport = {
      request_id: 'req_1',
      key_id: KEY,
      model: 'tg/sonnet',
      input_tokens: 10,
      output_tokens: 5,
      cost_micros: 7,
      format: 'chat',
      status: 200,
      latency_ms: 12,
      started_at_ms: 1_795_000_000_123,
    };
    const billed: UsageReport = {
      ...base,
      deployment: 'primary/claude',
      cache_read_tokens: 1,
      cache_write_tokens: 2,
      cache_write_1h_tokens: 1,
      web_search_requests: 0,
      cost_femtos: '7000000000',
      cache_saved_femtos: '-5',
    };
    const refusal: UsageReport = {
      ...base,
      input_tokens: 0,
      output_tokens: 0,
      cost_micros: 0,
      status: 429,
      refusal_reason: 'rate_limit',
      refused_count: 3,
    };
    for (const r of [base, billed, refusal]) {
      expect(JSON.parse(reportJson(r))).to.deep.equal(r);
      expect(usageReportSchema.safeParse(JSON.parse(reportJson(r))).success).to.equal(true);
    }
  });
});
