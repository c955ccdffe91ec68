import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { USAGE_ANSWER_PER_KEY, type UsageKeyMoney, type UsageReport, type UsageResult } from '../../shared/contract/usage.js';
import type { BenchContext } from '../lib/context.js';
import { runChild } from '../lib/load.js';
import { REPO_ROOT } from '../lib/procs.js';
import type { LoadFigures } from './overhead.js';
import type { SettlementResult, SettlementSpec } from './settlement-child.js';

const WORKSPACE_ID = '1c6b7b5f-0000-4000-8000-000000000001';
const KEY_ID = '0b5a6a4e-0000-4000-8000-000000000001';
/** Far more money than a run can spend, so every hold is admitted. */
const MONEY = 1e15;

/**
 * A control plane that records nothing and answers every usage report as the
 * real one does (each key's money, once), so the child pays for the same
 * answer it would parse in production.
 */
function standInControlPlane(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { reports } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reports: UsageReport[] };
      const money = { workspace_id: WORKSPACE_ID, balance_micros: MONEY, balance_version: 1, key_remaining_micros: MONEY, key_version: 1 };
      // Per key when asked (as the proxy does), else per report.
      const answer = req.url?.includes(`answer=${USAGE_ANSWER_PER_KEY}`)
        ? { keys: [...new Set(reports.map((r) => r.key_id))].map((key_id): UsageKeyMoney => ({ key_id, ...money })) }
        : { results: reports.map((r): UsageResult => ({ request_id: r.request_id, recorded: true, ...money })) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The proxy's settlement path in a child on the proxy's core: CPU per settled call, against end-to-end CPU per request. */
export async function settlementScenario(ctx: BenchContext): Promise<void> {
  const server = await standInControlPlane();
  try {
    const quick = ctx.profile.name === 'quick';
    const spec: SettlementSpec = {
      controlPlane: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seconds: 2,
      rounds: quick ? 3 : 8,
      perMs: 12,
      workspaceId: WORKSPACE_ID,
      keyId: KEY_ID,
      money: MONEY,
    };
    ctx.log('settlement: the proxy settlement path in-process');
    const args = ['--import', 'tsx', join(REPO_ROOT, 'bench/scenarios/settlement-child.ts'), JSON.stringify(spec)];
    const result = JSON.parse(await runChild(process.execPath, args, ctx.placement.sut, 'BENCH_RESULT', 300_000)) as SettlementResult;
    ctx.report.data.settlement = result;
    const overhead = (ctx.report.data.overhead as LoadFigures[] | undefined)?.find(
      (f) => f.system === 'tollgate' && f.format === 'chat' && f.connections === 50,
    );
    const table = ctx.report.section('Settlement in-process (hold, outbox, report, release per call)', [
      'calls',
      'rounds',
      'best µs/call',
      'median µs/call',
      '÷ proxy CPU/req',
    ]);
    const best = Math.min(...result.rounds);
    table.row(
      result.calls.toLocaleString('en-US'),
      String(result.rounds.length),
      best.toFixed(2),
      median(result.rounds).toFixed(2),
      overhead?.cpuUsPerRequest ? `${((median(result.rounds) / overhead.cpuUsPerRequest) * 100).toFixed(0)}%` : 'n/a',
    );
    table.note(
      `${spec.perMs} calls per ms in 1 ms slices, ${spec.seconds} s rounds; the control plane is a stand-in in the bench process, so only the proxy's side is counted. Run through tsx, as the bench's other in-process figures.`,
    );
  } finally {
    server.close();
  }
}
