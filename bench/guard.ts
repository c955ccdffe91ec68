/**
 * The CI guard against Tollgate's CPU per call slipping (`.ci/run`, about
 * 100 s on 2 cores). In one run it measures, at 50 connections, the CPU per
 * non-streamed call of the floor (the undici pass-through that decides
 * nothing) and of Tollgate — the proxy alone on Chat and Messages, passed
 * through and translated, and the `npm start` tree on Chat — in interleaved
 * rounds, so a change in the machine's load hits floor and Tollgate alike;
 * the least CPU per call each reached over the rounds is set against the
 * floor's least (load only adds, see `guardRatios`), and the four proxy
 * ratios also make one combined score; both are judged against
 * `bench/guard-baseline.json`. Absolute times are never compared. It exits 1
 * when the combined score, or two ratios or more, exceed their baselines by
 * more than their tolerance (the measured run-to-run spread).
 *
 *   npx tsx bench/guard.ts [--rounds 5] [--seconds 1.2] [--out run.json]
 *   npx tsx bench/guard.ts --regress 0.15     # self-test: Tollgate made 15 % costlier; must fail
 *   npx tsx bench/guard.ts --spread run1.json run2.json … [--write-baseline "why"]   # the spread of recorded runs
 *   npx tsx bench/guard.ts --judge run1.json …   # recorded runs judged against the baseline
 *
 * The load tool is always autocannon (CI has no wrk), so the baseline is
 * measured the way CI measures.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { z } from 'zod';
import { BenchContext, PROFILES, probe, tollgateRequest, type RequestShape } from './lib/context.js';
import {
  GUARD_FAILS_AT,
  GUARD_RATIOS,
  guardBaselineSchema,
  guardFailed,
  guardRatios,
  guardScore,
  guardSpread,
  judgeGuard,
  judgeScore,
  guardRunSchema,
  type GuardBaseline,
  type GuardRatio,
  type GuardRound,
} from './lib/guard.js';
import { choosePlacement, cpuMicros, ensureBuilt, REPO_ROOT, treeCpuMicros, waitUntilIdle, withCpu } from './lib/procs.js';
import { Report } from './lib/report.js';
import { provision, startTollgate, type Tollgate } from './lib/tollgate.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '1.2' },
    warm: { type: 'string', default: '1.5' },
    regress: { type: 'string' },
    out: { type: 'string' },
    spread: { type: 'boolean', default: false },
    // Recorded runs (`--out` files) judged against the baseline, as a run judges itself.
    judge: { type: 'boolean', default: false },
    // With --spread: write the baseline from those runs (median ratios, their spread as tolerance), saying why.
    'write-baseline': { type: 'string' },
    baseline: { type: 'string', default: join(REPO_ROOT, 'bench/guard-baseline.json') },
  },
});

const CONNECTIONS = 50;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const say = (line: string) => process.stdout.write(`${line}\n`);

/** One thing measured each round: whose CPU, and which request. */
interface Measured {
  key: 'floor chat' | 'floor messages' | GuardRatio;
  pid: number;
  tree: boolean;
  req: RequestShape;
}

/**
 * autocannon in this process (pinned to the driver cores): a child per
 * measurement cost a second of start-up each, 40 of them per run.
 */
function fire(req: RequestShape, seconds: number): Promise<{ requests: number; errors: number }> {
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: req.url,
      method: 'POST',
      headers: req.headers,
      body: req.body,
      connections: CONNECTIONS,
      duration: seconds,
      timeout: 10,
    });
    instance.on('done', (r: autocannon.Result) => resolve({ requests: r.requests.total, errors: r.errors + r.timeouts + r.non2xx }));
    instance.on('error', reject);
  });
}

async function measure(m: Measured, seconds: number): Promise<number> {
  const read = m.tree ? treeCpuMicros : cpuMicros;
  const { result, cpuUs } = await withCpu(
    { sut: m.pid },
    async () => {
      const r = await fire(m.req, seconds);
      // Settlement trails the calls: the tree settles in its own process, the split proxy hears back within the report window.
      if (m.tree) await waitUntilIdle(m.pid, 5_000, 0.1, read);
      else if (!m.key.startsWith('floor')) await sleep(300);
      return r;
    },
    m.tree ? new Set(['sut']) : undefined,
  );
  const completed = result.requests - result.errors;
  if (completed === 0 || result.errors > 0.01 * result.requests) {
    throw new Error(`${m.key}: ${result.errors} of ${result.requests} calls failed; the guard measures only calls that succeed`);
  }
  return cpuUs.sut! / completed;
}

async function startTollgates(ctx: BenchContext, regress: SelfTest | undefined): Promise<Measured[]> {
  const modelsFile = await ctx.models();
  const env = regress
    ? {
        NODE_OPTIONS: `--import ${join(REPO_ROOT, 'bench/lib/guard-regress-hook.mjs')}`,
        BENCH_GUARD_REGRESS: String(regress.share),
        BENCH_GUARD_REGRESS_DIR: regress.dir,
      }
    : {};
  const started: Tollgate[] = [];
  for (const shape of ['split', 'whole'] as const) {
    const t = await startTollgate({ shape, placement: ctx.placement, modelsFile, env });
    ctx.track(...(t.controlPlane ? [t.controlPlane] : []), t.proxy);
    ctx.removeLater(t.dataDir);
    started.push(t);
  }
  const [split, whole] = started as [Tollgate, Tollgate];
  const [p, w] = await Promise.all([provision(split, 'guard'), provision(whole, 'guard-tree')]);
  const at = (t: Tollgate, slug: string, key: string, format: 'chat' | 'messages', translated = false) =>
    tollgateRequest(t.edgeUrl, slug, key, format, { translated });
  const slug = p.org.workspace_slug;
  return [
    { key: 'chat', pid: split.proxy.pid, tree: false, req: at(split, slug, p.key, 'chat') },
    { key: 'messages', pid: split.proxy.pid, tree: false, req: at(split, slug, p.key, 'messages') },
    { key: 'chat translated', pid: split.proxy.pid, tree: false, req: at(split, slug, p.key, 'chat', true) },
    { key: 'messages translated', pid: split.proxy.pid, tree: false, req: at(split, slug, p.key, 'messages', true) },
    { key: 'tree chat', pid: whole.proxy.pid, tree: true, req: at(whole, w.org.workspace_slug, w.key, 'chat') },
  ];
}

/**
 * The self-test's regression (`bench/lib/guard-regress-hook.mjs`): a share of
 * each proxy process's own warm CPU per request, spun before every request.
 * Its processes name themselves in `dir`; `signal` tells them the warm-up is
 * over, then that the calibration pass is.
 */
interface SelfTest {
  share: number;
  dir: string;
  signal(): void;
  /** Resolves once every live process has taken its cost (timing its spin takes a moment). */
  calibrated(): Promise<void>;
  /** What each process found it costs per request, warm, and spins since. */
  spins(): string[];
}

const spinSchema = z.object({ ownUs: z.number(), served: z.number(), spinUs: z.number() });

function selfTest(share: number): SelfTest {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-guard-regress-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return {
    share,
    dir,
    signal() {
      for (const pid of readdirSync(dir)) {
        try {
          process.kill(Number(pid), 'SIGUSR2');
        } catch {
          /* a proxy that has exited has nothing to slow; the run fails on its calls */
        }
      }
    },
    async calibrated() {
      const pending = () => readdirSync(dir).filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(join(dir, pid), 'utf8'));
      const deadline = Date.now() + 30_000;
      while (pending().length && Date.now() < deadline) await sleep(100);
    },
    spins() {
      return readdirSync(dir).flatMap((pid) => {
        // A proxy that has exited ran no measured call.
        if (!existsSync(`/proc/${pid}`)) return [];
        const text = readFileSync(join(dir, pid), 'utf8');
        const command =
          readFileSync(`/proc/${pid}/cmdline`, 'utf8')
            .split('\0')
            .find((a) => a.endsWith('.js')) ?? '?';
        if (!text) return [`${command} (${pid}): not calibrated`];
        const s = spinSchema.parse(JSON.parse(text));
        return [
          `${command.split('/').slice(-1)[0]} (${pid}): ${s.ownUs.toFixed(1)} µs per request over ${s.served}, spins ${s.spinUs.toFixed(1)} µs`,
        ];
      });
    },
  };
}

async function run(): Promise<boolean> {
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const regress = values.regress === undefined ? undefined : selfTest(Number(values.regress));
  const baseline = guardBaselineSchema.parse(JSON.parse(readFileSync(values.baseline, 'utf8')));
  const t0 = performance.now();
  ensureBuilt();
  const placement = choosePlacement();
  // This process drives the load: off the core the systems under test run on.
  if (placement.driver) spawnSync('taskset', ['-a', '-p', '-c', placement.driver, String(process.pid)]);
  const ctx = new BenchContext(PROFILES.quick, placement, 'autocannon', 'split', new Report());
  say(
    `guard: ${placement.note}; ${rounds} rounds of ${seconds}s at ${CONNECTIONS} connections${regress ? `; self-test, Tollgate made ${regress.share * 100}% costlier` : ''}; load ${load()}`,
  );
  try {
    const floor = await ctx.floor();
    const all: Measured[] = [
      { key: 'floor chat', pid: floor.pid!, tree: false, req: floor.request('chat') },
      { key: 'floor messages', pid: floor.pid!, tree: false, req: floor.request('messages') },
      ...(await startTollgates(ctx, regress)),
    ];
    for (const m of all) {
      const problem = await probe(m.req);
      if (problem) throw new Error(`${m.key} does not answer 2xx: ${problem}`);
    }
    say(`started in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
    // Fresh processes need their code warm before a call costs what it will (docs/bench.md, Method).
    for (const m of all) await measure(m, Number(values.warm));
    say(`warmed at ${((performance.now() - t0) / 1000).toFixed(1)}s`);
    if (regress) {
      // The hook takes each process's own cost per request over one pass of every Tollgate path, warm, then spins.
      regress.signal();
      for (const m of all) if (!m.key.startsWith('floor')) await measure(m, seconds);
      regress.signal();
      await regress.calibrated();
      say(`self-test calibrated at ${((performance.now() - t0) / 1000).toFixed(1)}s: ${regress.spins().join('; ')}`);
    }
    const measured: GuardRound[] = [];
    for (let r = 0; r < rounds; r++) {
      const row: Partial<Record<Measured['key'], number>> = {};
      // Each round starts one later, so none always runs right after another.
      for (let i = 0; i < all.length; i++) {
        const m = all[(i + r) % all.length]!;
        row[m.key] = await measure(m, seconds);
      }
      const floorOf = { chat: row['floor chat']!, messages: row['floor messages']! };
      const tollgate = Object.fromEntries(GUARD_RATIOS.map((k) => [k, row[k]!])) as Record<GuardRatio, number>;
      measured.push({ floor: floorOf, tollgate });
      say(
        `round ${r + 1}: floor ${floorOf.chat.toFixed(1)} / ${floorOf.messages.toFixed(1)} µs; ${GUARD_RATIOS.map((k) => `${k} ${tollgate[k].toFixed(1)}`).join(', ')}; load ${load()}`,
      );
    }
    return report(measured, baseline);
  } finally {
    await ctx.close();
  }
}

function report(rounds: readonly GuardRound[], baseline: GuardBaseline, out = values.out): boolean {
  const ratios = guardRatios(rounds);
  const verdicts = judgeGuard(ratios, baseline);
  const combined = judgeScore(guardScore(ratios), baseline);
  for (const v of [...verdicts, combined]) {
    say(
      `${v.exceeded ? 'over' : 'ok  '} ${v.ratio.padEnd(20)} ${v.measured.toFixed(3)}× the floor (baseline ${v.baseline.toFixed(3)}×, limit ${v.limit.toFixed(3)}×)`,
    );
  }
  if (out) writeFileSync(out, JSON.stringify({ load: loadavg(), rounds, ratios, verdicts, combined }, null, 2));
  const over = [...verdicts, combined].filter((v) => v.exceeded).map((v) => v.ratio);
  if (guardFailed(verdicts, combined)) {
    say(
      `guard: CPU per call rose beyond the recorded spread (${over.join(', ')}). If the cost is wanted, ` +
        'raise bench/guard-baseline.json in a commit that says why.',
    );
    return false;
  }
  if (over.length) say(`guard: passed; ${over.join(', ')} alone over its limit (a real slip moves the score or ${GUARD_FAILS_AT} ratios)`);
  return true;
}

/** Recorded runs' rounds (`--out` files), judged afresh: the spread does not depend on the rule a run was judged by. */
function spread(files: string[]): void {
  const runs = files.map((f) => guardRunSchema.parse(JSON.parse(readFileSync(f, 'utf8'))).rounds);
  const spreads = guardSpread(runs);
  for (const s of spreads) {
    say(
      `${s.ratio.padEnd(20)} min ${s.min.toFixed(3)}  median ${s.median.toFixed(3)}  max ${s.max.toFixed(3)}  spread ${(s.spread * 100).toFixed(1)} %`,
    );
  }
  const why = values['write-baseline'];
  if (!why) return;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const ratios = spreads.filter((s) => s.ratio !== 'combined');
  const combined = spreads.find((s) => s.ratio === 'combined')!;
  const baseline = guardBaselineSchema.parse({
    why,
    ratios: Object.fromEntries(ratios.map((s) => [s.ratio, round(s.median)])),
    tolerance: Object.fromEntries(ratios.map((s) => [s.ratio, round(s.spread)])),
    combined: { ratio: round(combined.median), tolerance: round(combined.spread) },
  });
  writeFileSync(values.baseline, `${JSON.stringify(baseline, null, 2)}\n`);
  say(`wrote ${values.baseline}`);
}

function judgeRecorded(files: string[]): boolean {
  const baseline = guardBaselineSchema.parse(JSON.parse(readFileSync(values.baseline, 'utf8')));
  let passed = true;
  for (const f of files) {
    say(f);
    passed = report(guardRunSchema.parse(JSON.parse(readFileSync(f, 'utf8'))).rounds, baseline, undefined) && passed;
  }
  return passed;
}

if (values.spread) spread(positionals);
else if (values.judge) process.exitCode = judgeRecorded(positionals) ? 0 : 1;
else if (!(await run())) process.exitCode = 1;
