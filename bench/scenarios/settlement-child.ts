/**
 * Settlement child: what the proxy spends to settle a call, in isolation —
 * the hold at admission, the call's usage gathered, the batch written to the
 * outbox, reported to the control plane over HTTP, the holds released on its
 * answer — at a steady rate, without the edge's sockets. The control plane is
 * a stand-in in the bench process (on the driver core), so the CPU measured
 * here is the proxy's alone. It is steadier than the end-to-end figures,
 * where the settlement is about a fifth of the proxy's cost and the machine's
 * noise is as large.
 *
 *   node --import tsx bench/scenarios/settlement-child.ts \
 *     '{"controlPlane":"http://127.0.0.1:4000","seconds":2,"rounds":6,"perMs":12,"workspaceId":"…","keyId":"…","money":1e15}'
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../shared/logger.js';
import { plainUsage } from '../../proxy/call.js';
import { createControlPlaneClient } from '../../proxy/control-plane-client.js';
import { createMemoryHoldStore } from '../../proxy/money/holds.js';
import { createHoldKeepAlive } from '../../proxy/money/keep-alive.js';
import { createMetering, type HeldCall } from '../../proxy/money/metering.js';
import { openOutbox } from '../../proxy/money/outbox.js';
import { createRateLimits } from '../../proxy/rate-limits.js';
import { createSettlementWatch } from '../../proxy/money/settlement-watch.js';
import { BENCH_MODEL } from '../lib/model.js';

export interface SettlementSpec {
  controlPlane: string;
  /** Length of one measured round. */
  seconds: number;
  rounds: number;
  /** Calls settled per millisecond (12: about the proxy's rate at 50 connections on this rig). */
  perMs: number;
  /** The workspace and key every call bills, and the money each has: far more than a run spends. */
  workspaceId: string;
  keyId: string;
  money: number;
}

export interface SettlementResult {
  /** CPU µs per settled call, one figure per round. */
  rounds: number[];
  calls: number;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as SettlementSpec;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-outbox-'));
  const logger = createLogger('warn', 'bench-settlement');
  const holds = createMemoryHoldStore(15 * 60_000);
  const live = createHoldKeepAlive(holds, 5 * 60_000, logger);
  const metering = createMetering({
    cp: createSettlementWatch(undefined).wrap(createControlPlaneClient(spec.controlPlane, 'bench')),
    holds,
    limits: createRateLimits(undefined, 'bench'),
    logger,
    outbox: openOutbox(dir),
    live,
    retryMaxMs: 1_000,
    maxPending: 10_000_000,
  });
  const snapshot = {
    workspaceId: spec.workspaceId,
    balanceMicros: spec.money,
    balanceVersion: 1,
    keyId: spec.keyId,
    keyRemainingMicros: spec.money,
    keyVersion: 1,
  };
  let n = 0;
  /** One call as the edge settles it: held, admitted, then billed for a 12-token answer. */
  const oneCall = (): void => {
    const requestId = `req_${(n++).toString(16).padStart(32, '0')}`;
    const held = holds.hold(requestId, snapshot, 4_000);
    if (!('ok' in held) || !held.ok) throw new Error('the bench hold was refused');
    const call: HeldCall = {
      requestId,
      keyId: spec.keyId,
      workspaceId: spec.workspaceId,
      tpm: 2_000_000_000,
      model: BENCH_MODEL,
      holdMicros: 4_000,
      inputEstimate: 256,
      tokensTaken: 256,
      keyBudget: true,
      format: 'chat',
      startedMs: performance.now(),
    };
    metering.admitted(call);
    metering.settle(call, plainUsage(256, 12), 'chat');
  };
  /** Calls arrive in 1 ms slices, as load does; the round ends once the control plane has taken them all. */
  const round = async (seconds: number): Promise<number> => {
    const first = n;
    const before = process.cpuUsage();
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      for (let i = 0; i < spec.perMs; i++) oneCall();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await metering.drain();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / (n - first);
  };
  await round(spec.seconds);
  const rounds: number[] = [];
  for (let r = 0; r < spec.rounds; r++) rounds.push(await round(spec.seconds));
  await metering.close(1_000);
  live.stop();
  rmSync(dir, { recursive: true, force: true });
  const result: SettlementResult = { rounds, calls: n };
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
}

await main();
