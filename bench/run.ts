/**
 * `npm run bench [-- --quick] [--only <scenario>[,<scenario>…]] [--tool wrk|autocannon] [--shape split|combined]`
 *
 * Starts the fake upstream, each system under test and the load generator in
 * their own processes (pinned to cores where the OS allows), runs each
 * scenario after a warm-up, prints a table and writes bench/results/latest.json.
 * See docs/bench.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BenchContext, PROFILES } from './lib/context.js';
import { pickLoadTool, type LoadTool } from './lib/load.js';
import { choosePlacement, CPU_RESOLUTION_US, ensureBuilt, REPO_ROOT } from './lib/procs.js';
import { Report } from './lib/report.js';
import type { Shape } from './lib/tollgate.js';
import { coldKeysScenario } from './scenarios/cold-keys.js';
import { deploymentsScenario } from './scenarios/deployments.js';
import { keyCacheScenario } from './scenarios/key-cache.js';
import { ledgerScenario } from './scenarios/ledger.js';
import { observabilityScenario } from './scenarios/observability.js';
import { overheadScenario } from './scenarios/overhead.js';
import { responsesScenario } from './scenarios/responses.js';
import { scaleOutScenario } from './scenarios/scale-out.js';
import { scimScenario } from './scenarios/scim.js';
import { settlementScenario } from './scenarios/settlement.js';
import { soakScenario } from './scenarios/soak.js';
import { usageScenario } from './scenarios/usage.js';
import { streamingScenario } from './scenarios/streaming.js';
import { streamsScenario } from './scenarios/streams.js';
import { translationScenario } from './scenarios/translation.js';
import { wholeScenario } from './scenarios/whole.js';
import { websocketScenario } from './scenarios/websocket.js';

const SCENARIOS = [
  'overhead',
  'streaming',
  'streams',
  'translation',
  'responses',
  'websocket',
  'peer',
  'observability',
  'settlement',
  'ledger',
  'scale-out',
  'whole',
  'key-cache',
  'cold-keys',
  'scim',
  'usage',
  'soak',
  'deployments',
] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join('|')}[,…]] [--tool wrk|autocannon] [--shape split|combined] [--cp-nice 0-19]`;

function parse(): { quick: boolean; only: Set<Scenario>; tool: LoadTool | undefined; shape: Shape; out: string; cpNice: number } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        only: { type: 'string' },
        tool: { type: 'string' },
        shape: { type: 'string', default: 'split' },
        'cp-nice': { type: 'string', default: '0' },
        out: { type: 'string', default: join(REPO_ROOT, 'bench/results/latest.json') },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = new Set<Scenario>();
  for (const name of (values.only ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      process.stderr.write(`unknown scenario "${name}"\n${USAGE}\n`);
      process.exit(2);
    }
    only.add(name as Scenario);
  }
  if (values.tool !== undefined && values.tool !== 'wrk' && values.tool !== 'autocannon') {
    process.stderr.write(`--tool must be wrk or autocannon\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.shape !== 'split' && values.shape !== 'combined') {
    process.stderr.write(`--shape must be split or combined\n${USAGE}\n`);
    process.exit(2);
  }
  const cpNice = Number(values['cp-nice']);
  if (!Number.isInteger(cpNice) || cpNice < 0 || cpNice > 19) {
    process.stderr.write(`--cp-nice must be an integer 0-19\n${USAGE}\n`);
    process.exit(2);
  }
  return { quick: values.quick, only, tool: values.tool, shape: values.shape, out: values.out, cpNice };
}

async function main(): Promise<void> {
  const args = parse();
  const profile = PROFILES[args.quick ? 'quick' : 'full'];
  ensureBuilt();
  const placement = choosePlacement();
  const tool = pickLoadTool(args.tool);
  const report = new Report();
  const ctx = new BenchContext(profile, placement, tool, args.shape, report, args.cpNice);
  const startedAt = new Date();
  process.stdout.write(
    `Tollgate bench (${profile.name}) — ${cpus().length} cores, Node ${process.version}, load generator ${tool}, Tollgate ${args.shape}${args.cpNice ? ` (control plane at nice ${args.cpNice})` : ''}\n` +
      `placement: ${placement.note}\n` +
      `load average at start: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
  );
  const failures: Record<string, string> = {};
  let placed: { name: string; pid: number; cores: string }[] | undefined;
  const run = async (name: Scenario, fn: () => Promise<void>) => {
    if (!args.only.has(name)) return;
    const t0 = Date.now();
    try {
      await fn();
    } catch (err) {
      failures[name] = (err as Error).stack ?? String(err);
      ctx.log(`${name} failed: ${(err as Error).message.split('\n').slice(0, 6).join('\n')}`);
    }
    ctx.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(0)}s`);
  };
  const stopping = () => void ctx.close().then(() => process.exit(130));
  process.once('SIGINT', stopping);
  process.once('SIGTERM', stopping);
  try {
    // overhead and peer run together so all four systems share one run's conditions.
    if (args.only.has('overhead') || args.only.has('peer')) {
      await run(args.only.has('overhead') ? 'overhead' : 'peer', () => overheadScenario(ctx, { portkey: args.only.has('peer') }));
    }
    await run('whole', () => wholeScenario(ctx));
    await run('streaming', () => streamingScenario(ctx));
    await run('streams', () => streamsScenario(ctx));
    await run('translation', () => translationScenario(ctx));
    await run('responses', () => responsesScenario(ctx));
    await run('websocket', () => websocketScenario(ctx));
    await run('observability', () => observabilityScenario(ctx));
    await run('settlement', () => settlementScenario(ctx));
    await run('ledger', () => ledgerScenario(ctx));
    await run('scale-out', () => scaleOutScenario(ctx));
    await run('soak', () => soakScenario(ctx));
    await run('cold-keys', () => coldKeysScenario(ctx));
    await run('key-cache', () => keyCacheScenario(ctx));
    await run('scim', () => scimScenario(ctx));
    await run('usage', () => usageScenario(ctx));
    await run('deployments', () => deploymentsScenario(ctx));
  } finally {
    placed = ctx.placementCheck();
    await ctx.close();
  }
  const where = report.section('Placement (affinity read back from /proc/<pid>/status)', ['process', 'pid', 'cores']);
  const seen = new Set<string>();
  for (const p of placed ?? []) {
    if (seen.has(`${p.name} ${p.cores}`)) continue; // restarts of the same role on the same cores
    seen.add(`${p.name} ${p.cores}`);
    where.row(p.name, String(p.pid), p.cores);
  }
  where.note('Load generators (wrk, or the Node load children) are started per measurement with the driver cores.');

  const finishedAt = new Date();
  const results = {
    meta: {
      profile,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      seconds: (finishedAt.getTime() - startedAt.getTime()) / 1000,
      node: process.version,
      cpus: cpus().map((c) => c.model),
      memoryBytes: totalmem(),
      loadAverageAtEnd: loadavg(),
      placement,
      processes: placed,
      loadGenerator: tool,
      tollgateShape: args.shape,
      controlPlaneNice: args.cpNice,
      cpuResolutionUs: CPU_RESOLUTION_US,
      scenarios: [...args.only],
    },
    checks: report.checks,
    failures,
    ...report.data,
  };
  mkdirSync(join(args.out, '..'), { recursive: true });
  writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${report.render()}\n\n`);
  for (const [name, stack] of Object.entries(failures)) process.stdout.write(`scenario ${name} failed: ${stack.split('\n')[0]}\n`);
  process.stdout.write(
    `took ${results.meta.seconds.toFixed(0)}s; load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} ` + `(anything else running on these cores makes the numbers noisy)\nwrote ${args.out}\n`,
  );
}

await main();
