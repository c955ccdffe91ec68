import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { chatBody } from '../lib/bodies.js';
import type { BenchContext, System } from '../lib/context.js';
import { fmtMs, fmtNum } from '../lib/report.js';
import { FAILOVER_ALIAS, FAILOVER_LOCALHOST_ALIAS, FAST_ALIAS, startProxyVariant, THREE_ALIAS } from '../lib/tollgate.js';
import { measureLoad, type LoadFigures } from './overhead.js';

/** The same Tollgate proxy calling another alias (Chat Completions, non-streamed). */
function aliasSystem(base: System, edgeUrl: string, slug: string, key: string, alias: string, pid = base.pid): System {
  return {
    ...base,
    pid,
    request: () => ({
      url: `${edgeUrl}/${slug}/v1/chat/completions`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: chatBody(alias),
    }),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

export interface PairedFigures {
  /** Median latency of each alias, µs. */
  p50Us: Record<string, number>;
  /** Median of the per-round differences against the single deployment, µs. */
  addedUs: Record<string, number>;
  rounds: number;
}

/**
 * Calls from the driver one at a time, in rounds: in each round every alias
 * once, in a rotating order. The median of the rounds' differences against
 * the single deployment is what an alias adds, with the machine's drift
 * cancelled round by round.
 */
async function pairedLatency(edgeUrl: string, slug: string, key: string, aliases: string[], rounds: number): Promise<PairedFigures> {
  const pool = new Pool(edgeUrl, { connections: 1 });
  const once = async (alias: string): Promise<number> => {
    const t0 = performance.now();
    const res = await pool.request({
      method: 'POST',
      path: `/${slug}/v1/chat/completions`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: chatBody(alias),
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`${alias} answered ${res.statusCode}`);
    return (performance.now() - t0) * 1000;
  };
  const times = new Map(aliases.map((a) => [a, [] as number[]]));
  const diffs = new Map(aliases.map((a) => [a, [] as number[]]));
  try {
    for (let r = 0; r < rounds + 50; r++) {
      const got = new Map<string, number>();
      for (let i = 0; i < aliases.length; i++) {
        const alias = aliases[(r + i) % aliases.length]!;
        got.set(alias, await once(alias));
      }
      // The first 50 rounds warm every path (and the JIT) and are not counted.
      if (r < 50) continue;
      for (const a of aliases) {
        times.get(a)!.push(got.get(a)!);
        diffs.get(a)!.push(got.get(a)! - got.get(aliases[0]!)!);
      }
    }
  } finally {
    await pool.close();
  }
  const of = (m: Map<string, number[]>) => Object.fromEntries([...m].map(([a, xs]) => [a, median(xs)]));
  return { p50Us: of(times), addedUs: of(diffs), rounds };
}

/**
 * Deployments (issue 26), in one run: what routing adds to a call of an alias
 * with three deployments against one with a single deployment (the same
 * proxy, the same upstream), and what a failover to a refusing deployment
 * (connection refused on loopback) adds to a call. The failover proxy is one
 * more proxy over the same control plane with the circuit breaker out of
 * reach (`PROXY_DEPLOYMENT_FAILURES` 10⁹), so every call pays the failover;
 * with the default circuit the refusing deployment is skipped after three
 * failures, measured as the last row.
 */
export async function deploymentsScenario(ctx: BenchContext): Promise<void> {
  const { system, tollgate, provisioned } = await ctx.tollgate();
  const slug = provisioned.org.workspace_slug;
  const key = provisioned.key;
  const one = aliasSystem(system, tollgate.edgeUrl, slug, key, FAST_ALIAS);
  const three = aliasSystem(system, tollgate.edgeUrl, slug, key, THREE_ALIAS);
  const circuit = aliasSystem(system, tollgate.edgeUrl, slug, key, FAILOVER_ALIAS);
  const variant = await startProxyVariant(tollgate, 'proxy (circuit out of reach)', { PROXY_DEPLOYMENT_FAILURES: '1000000000' }, ctx.placement);
  ctx.track(variant.proxy);
  const oneV = aliasSystem(system, variant.edgeUrl, slug, key, FAST_ALIAS, variant.proxy.pid);
  const failV = aliasSystem(system, variant.edgeUrl, slug, key, FAILOVER_ALIAS, variant.proxy.pid);

  const runs: { label: string; f: LoadFigures }[] = [];
  const load0 = loadavg()[0]!;
  for (const s of [one, three, oneV, failV]) await measureLoad(ctx, s, 'chat', 50, ctx.profile.warmS);
  // Each pair alternated twice, so the machine's drift hits both alike.
  const pairs: [string, System][] = [
    ['1 deployment', one],
    ['3 deployments (weights 1:1:1)', three],
    ['1 deployment (failover proxy)', oneV],
    ['refused on 127.0.0.1, then served (failover proxy)', failV],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [label, s] of pairs) {
      ctx.log(`deployments: ${label}, 50 connections (round ${round + 1})`);
      runs.push({ label, f: await measureLoad(ctx, s, 'chat', 50, ctx.profile.measureS) });
    }
  }
  ctx.log('deployments: refusing deployment behind an open circuit (default settings), 50 connections');
  runs.push({ label: 'refused on 127.0.0.1, circuit open (default settings)', f: await measureLoad(ctx, circuit, 'chat', 50, ctx.profile.measureS) });
  const rounds = ctx.profile.name === 'quick' ? 300 : 1500;
  ctx.log(`deployments: ${rounds} rounds of one call each, one at a time (failover proxy)`);
  const paired = await pairedLatency(variant.edgeUrl, slug, key, [FAST_ALIAS, FAILOVER_ALIAS, FAILOVER_LOCALHOST_ALIAS], rounds);
  const load1 = loadavg()[0]!;

  const table = ctx.report.section('Deployments: routing and failover (Chat Completions, non-streamed, 50 connections)', [
    'alias',
    'req/s',
    'p50 ms',
    'p99 ms',
    'proxy CPU µs/req',
    'errors',
  ]);
  for (const { label, f } of runs) {
    table.row(label, fmtNum(f.rps), fmtMs(f.latencyUs.p50), fmtMs(f.latencyUs.p99), fmtNum(f.cpuUsPerRequest ?? NaN), `${f.errors}/${f.requests}`);
  }
  const latency = ctx.report.section(`Deployments: one call at a time, ${rounds} rounds (failover proxy)`, [
    'alias',
    'p50 ms',
    'added ms (median of rounds)',
  ]);
  for (const a of [FAST_ALIAS, FAILOVER_ALIAS, FAILOVER_LOCALHOST_ALIAS]) latency.row(a, fmtMs(paired.p50Us[a]!), fmtMs(paired.addedUs[a]!));
  latency.note(
    `${FAILOVER_ALIAS}: refused on 127.0.0.1:1 first; ${FAILOVER_LOCALHOST_ALIAS}: refused on localhost:1 (a lookup, then ::1 and 127.0.0.1 both refused)`,
  );
  latency.note(`load average (1 min) ${load0.toFixed(2)} at the start, ${load1.toFixed(2)} at the end`);

  const cpuOf = (label: string) => {
    const xs = runs.filter((r) => r.label === label && r.f.errors <= r.f.requests * 0.01).map((r) => r.f.cpuUsPerRequest ?? NaN);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  };
  const addedThree = cpuOf(pairs[1]![0]) - cpuOf(pairs[0]![0]);
  const addedFailover = cpuOf(pairs[3]![0]) - cpuOf(pairs[2]![0]);
  ctx.report.data.deployments = { runs, paired, loadavg: [load0, load1], addedCpuUs: { three: addedThree, failover: addedFailover } };
  ctx.report.check({
    scenario: 'deployments',
    figure: 'proxy CPU µs/req, 3 deployments − 1 (mean of 2 runs each)',
    value: addedThree,
    target: 'noise (≤ 10 µs)',
    pass: Number.isFinite(addedThree) ? addedThree <= 10 : undefined,
  });
  ctx.report.check({
    scenario: 'deployments',
    figure: 'proxy CPU µs/req a failover to a refusing deployment adds',
    value: addedFailover,
    target: '(reported)',
    pass: undefined,
  });
  ctx.report.check({
    scenario: 'deployments',
    figure: 'latency a failover to a refusing 127.0.0.1 deployment adds (ms)',
    value: paired.addedUs[FAILOVER_ALIAS]! / 1000,
    target: '< 5 ms',
    pass: Number.isFinite(paired.addedUs[FAILOVER_ALIAS]!) ? paired.addedUs[FAILOVER_ALIAS]! < 5000 : undefined,
  });
}
