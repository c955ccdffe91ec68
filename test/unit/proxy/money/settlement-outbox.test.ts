import { expect } from 'chai';
import fc from 'fast-check';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UsageKeyMoney, UsageReport } from '../../../../shared/contract/usage.js';
import { plainUsage } from '../../../../proxy/call.js';
import { ControlPlaneUnavailable, type ReportText } from '../../../../proxy/control-plane-client.js';
import { createMemoryHoldStore } from '../../../../proxy/money/holds.js';
import { createHoldKeepAlive } from '../../../../proxy/money/keep-alive.js';
import { createMetering, type HeldCall } from '../../../../proxy/money/metering.js';
import { openOutbox, type OutboxRecord } from '../../../../proxy/money/outbox.js';
import { entryOf, linesBuffer, recordLine } from '../../../../proxy/money/record-json.js';
import { createRateLimits } from '../../../../proxy/rate-limits.js';
import { createLogger } from '../../../../shared/logger.js';
import { testConfig } from '../../../support/control-plane.js';

const logger = createLogger('silent', 'test-outbox');
const SONNET = testConfig().models.models.get('tg/sonnet')!;
const KEY = '00000000-0000-4000-8000-000000000001';

function record(n: number): OutboxRecord {
  return {
    report: { request_id: `req_${n}`, key_id: KEY, model: 'tg/sonnet', input_tokens: 10, output_tokens: 10, cost_micros: 100 },
    workspaceId: 'ws1',
    keyBudget: true,
  };
}

/** A billed record as metering writes it: the cache split, searches and the exact cost in femtodollars. */
function billed(n: number): OutboxRecord {
  const r = record(n);
  return {
    ...r,
    report: {
      ...r.report,
      format: 'messages',
      status: 200,
      latency_ms: 12,
      cache_read_tokens: 80_000,
      cache_write_tokens: 3_000,
      cache_write_1h_tokens: 1_000,
      web_search_requests: 2,
      cost_femtos: '41325000000000',
      cache_saved_femtos: '-213750000000000',
    },
  };
}

function call(n: number): HeldCall {
  return {
    requestId: `req_${n}`,
    keyId: KEY,
    workspaceId: 'ws1',
    tpm: null,
    model: SONNET,
    holdMicros: 1_000,
    inputEstimate: 10,
    tokensTaken: 0,
    keyBudget: true,
    format: 'chat',
    startedMs: performance.now(),
  };
}

/** A control plane whose usage endpoint fails while `down` is set, and records what it took. */
function fakeControlPlane() {
  const taken: UsageReport[] = [];
  const cp = {
    down: false,
    /** A request id the control plane refuses (400) in any batch that carries it. */
    refuse: undefined as string | undefined,
    attempts: 0,
    taken,
    async reportUsage(sent: readonly ReportText[]): Promise<UsageKeyMoney[]> {
      cp.attempts++;
      const reports = sent.map((r) => JSON.parse(r.json) as UsageReport);
      if (cp.down) throw new ControlPlaneUnavailable('control plane unreachable');
      if (reports.some((r) => r.request_id === cp.refuse)) throw new Error('control plane refused POST /internal/usage: 400');
      taken.push(...reports);
      // No key known: no money to adopt.
      return [];
    },
  };
  return cp;
}

/** Metering over an in-process hold store and an outbox in `dir`, as the runtime wires them. */
function meteringOn(dir: string, cp: ReturnType<typeof fakeControlPlane>, retryMaxMs: number, maxPending: number) {
  const holds = createMemoryHoldStore(60_000);
  const live = createHoldKeepAlive(holds, 10_000, logger);
  const metering = createMetering({
    cp,
    holds,
    limits: createRateLimits(undefined, 't'),
    logger,
    outbox: openOutbox(dir),
    live,
    retryMaxMs,
    maxPending,
  });
  return { holds, live, metering };
}

const until = async (what: string, check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('proxy: settlement outbox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-outbox-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes each record as the very line JSON.stringify makes (recordOnly only when true), whatever its text and whichever optional fields it has', () => {
    const int = fc.oneof(fc.nat(), fc.integer(), fc.constant(-0));
    const report = fc.record(
      {
        request_id: fc.string(),
        key_id: fc.string(),
        model: fc.string({ unit: 'binary' }),
        input_tokens: int,
        output_tokens: int,
        cost_micros: int,
        format: fc.constantFrom('chat' as const, 'messages' as const),
        status: int,
        latency_ms: int,
        cache_read_tokens: int,
        cache_write_tokens: int,
        cache_write_1h_tokens: int,
        web_search_requests: int,
        cost_femtos: fc.string(),
        cache_saved_femtos: fc.string(),
      },
      { requiredKeys: ['request_id', 'key_id', 'model', 'input_tokens', 'output_tokens', 'cost_micros'] },
    );
    const rec = fc.record(
      { report, workspaceId: fc.string({ unit: 'binary' }), keyBudget: fc.boolean(), recordOnly: fc.boolean() },
      { requiredKeys: ['report', 'workspaceId', 'keyBudget'] },
    );
    fc.assert(
      fc.property(rec, (r) => {
        expect(recordLine(r)).to.equal(`${JSON.stringify({ ...r, recordOnly: r.recordOnly ? true : undefined })}\n`);
        // What the outbox writes: the same lines, straight into a buffer.
        expect(linesBuffer([entryOf(r), entryOf(r)]).toString('utf8')).to.equal(recordLine(r).repeat(2));
      }),
    );
    const usual = { ...record(1), report: { ...record(1).report, format: 'chat' as const, status: 200, latency_ms: 3 } };
    expect(recordLine(usual)).to.equal(`${JSON.stringify(usual)}\n`);
    expect(recordLine(billed(1))).to.equal(`${JSON.stringify(billed(1))}\n`);
  });

  it('replays a billed record with its cache split and exact cost, every field as written', async () => {
    const first = openOutbox(dir);
    await first.append([billed(1), record(2)].map(entryOf));
    await first.close();
    const again = openOutbox(dir);
    expect(again.replayed.map((r) => r.record)).to.deep.equal([billed(1), record(2)]);
    await again.close();
  });

  it('replays what was written and not acknowledged, skipping a torn last line; a file whose records were all acknowledged is emptied', async () => {
    const first = openOutbox(dir);
    const slot = await first.append([record(1), record(2)].map(entryOf));
    await first.ack(slot, 2);
    await first.append([record(3)].map(entryOf));
    // A crash mid-write leaves half a line.
    const [file] = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    appendFileSync(join(dir, file!), '{"report":{"request_id":"req_4"');
    const second = openOutbox(dir);
    expect(second.replayed.map((r) => r.record.report.request_id)).to.deep.equal(['req_3']);
    await second.ack(second.replayed[0]!.slot, 1);
    await second.close();
    expect(openOutbox(dir).replayed).to.deep.equal([]);
  });

  it('a call settled after the previous one went to disk still joins its report: the control plane gets one report, not one per gathered batch', async () => {
    const cp = fakeControlPlane();
    const { metering } = meteringOn(dir, cp, 50, 1_000);
    metering.settle(call(1), plainUsage(10, 10), 'chat');
    // Longer than the 15 ms gather window (req_1 is written on its own), well inside the 100 ms report window.
    await new Promise((r) => setTimeout(r, 30));
    metering.settle(call(2), plainUsage(10, 10), 'chat');
    await until('both recorded', () => cp.taken.length === 2);
    expect(cp.attempts).to.equal(1);
    // drain() (tests, shutdown) sends what waits without the window.
    metering.settle(call(3), plainUsage(10, 10), 'chat');
    await metering.drain();
    expect(cp.taken.map((r) => r.request_id)).to.deep.equal(['req_1', 'req_2', 'req_3']);
    expect(cp.attempts).to.equal(2);
  });

  it('a restarted proxy holds its unacknowledged spend again before it admits anything, and sends it', async () => {
    const earlier = openOutbox(dir);
    await earlier.append([record(1), record(2)].map(entryOf));
    const cp = fakeControlPlane();
    cp.down = true;
    const { holds, live, metering } = meteringOn(dir, cp, 50, 100);
    await metering.start();
    // 1,000 left on the key by the control plane's count, 200 of it already spent here and not yet recorded there.
    const snapshot = { workspaceId: 'ws1', balanceMicros: 1_000_000, balanceVersion: 1, keyId: KEY, keyRemainingMicros: 1_000, keyVersion: 1 };
    expect(await holds.hold('req_new', snapshot, 801)).to.deep.equal({ ok: false, reason: 'budget' });
    expect(await holds.hold('req_new', snapshot, 800)).to.deep.equal({ ok: true });
    cp.down = false;
    await until('the replayed usage recorded', () => cp.taken.length === 2);
    await metering.close(1_000);
    live.stop();
  });

  it('never drops a report however long the control plane is down, and retries at once when woken', async () => {
    const cp = fakeControlPlane();
    cp.down = true;
    // A retry ceiling far longer than the test: only wake() can make the report go in time.
    const { live, metering } = meteringOn(dir, cp, 3_600_000, 2);
    metering.admitted(call(1));
    metering.settle(call(1), plainUsage(10, 10), 'chat');
    await until('several failed attempts', () => cp.attempts >= 3);
    expect(openOutbox(dir).replayed.map((r) => r.record.report.request_id)).to.deep.equal(['req_1']);
    expect(live.list().map((h) => h.requestId)).to.deep.equal(['req_1']);
    expect(metering.full()).to.equal(false);
    metering.admitted(call(2));
    metering.settle(call(2), plainUsage(10, 10), 'chat');
    // Two settlements unacknowledged: new calls are refused rather than served unbilled.
    expect(metering.full()).to.equal(true);
    cp.down = false;
    metering.wake();
    await until('both recorded', () => cp.taken.length === 2);
    await metering.drain();
    expect(metering.full()).to.equal(false);
    expect(live.list()).to.deep.equal([]);
    await metering.close(1_000);
    expect(openOutbox(dir).replayed).to.deep.equal([]);
    live.stop();
  });

  it('a record the control plane refuses is set apart and kept; every other record in its batch is recorded', async () => {
    const cp = fakeControlPlane();
    cp.refuse = 'req_3';
    const { live, metering } = meteringOn(dir, cp, 3_600_000, 100);
    for (let i = 1; i <= 6; i++) {
      metering.admitted(call(i));
      metering.settle(call(i), plainUsage(10, 10), 'chat');
    }
    await until('the others recorded', () => cp.taken.length === 5);
    expect(cp.taken.map((r) => r.request_id).sort()).to.deep.equal(['req_1', 'req_2', 'req_4', 'req_5', 'req_6']);
    // The refused one still owes its money and is still on disk.
    expect(live.list().map((h) => h.requestId)).to.deep.equal(['req_3']);
    expect(openOutbox(dir).replayed.map((r) => r.record.report.request_id)).to.include('req_3');
    await metering.close(100);
    live.stop();
  });
});
