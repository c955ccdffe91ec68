import { probe, tollgateRequest, type BenchContext, type System, type SystemName } from '../lib/context.js';
import { fmtMs, fmtNum, ratio } from '../lib/report.js';
import { measureResponsesCost, RESPONSES_ROUTES, type ResponsesRoute } from '../lib/responses-cost.js';
import { medianBy } from '../lib/stats.js';
import { FAST_ALIAS, PACED_ALIAS, TRANSLATED_ALIASES } from '../lib/tollgate.js';
import { measureLoad, type LoadFigures } from './overhead.js';
import { measureStreams, type StreamFigures } from './streaming.js';

/** The target: a translated Responses call costs at most this many times a pass-through one's CPU. */
export const RESPONSES_CPU_TARGET = 1.3;

/** Which alias each route calls: its provider speaks Responses, only Chat Completions, or only Messages. */
const ROUTE_ALIASES: Record<ResponsesRoute, { fast: string; paced: string; system: SystemName; label: string }> = {
  passThrough: { fast: FAST_ALIAS, paced: PACED_ALIAS, system: 'tollgate', label: 'pass-through (Responses provider)' },
  viaChat: { fast: TRANSLATED_ALIASES.fast.messages, paced: TRANSLATED_ALIASES.paced.messages, system: 'translated', label: 'Chat-only provider' },
  viaMessages: {
    fast: TRANSLATED_ALIASES.fast.chat,
    paced: TRANSLATED_ALIASES.paced.chat,
    system: 'two-hop',
    label: 'Messages-only provider (via Chat)',
  },
};

/**
 * A Responses client, in one run, on the same Tollgate and the same fake
 * upstreams: passed through to a provider that speaks Responses, translated
 * to a Chat-only provider, and translated twice (via Chat) to a Messages-only
 * one. Only the alias differs. A route whose probe fails is reported and left out.
 */
export async function responsesScenario(ctx: BenchContext): Promise<void> {
  const { routes, load, streams } = await measureRoutes(ctx);
  ctx.report.data.responses = { routes, load, streams };
  reportRoutes(ctx, load, streams);
  reportTranslationWork(ctx);
  checkTargets(ctx, load, streams);
}

/** Each route that answers, non-streamed at 50 connections and streamed at 1 and 50, in alternating rounds. */
async function measureRoutes(ctx: BenchContext): Promise<{ routes: ResponsesRoute[]; load: LoadFigures[]; streams: StreamFigures[] }> {
  await ctx.upstream();
  const { system: base, tollgate, provisioned } = await ctx.tollgate();
  const systemOf = (route: ResponsesRoute): System => {
    const aliases = ROUTE_ALIASES[route];
    return {
      ...base,
      name: aliases.system,
      request: (_format, o = {}) =>
        tollgateRequest(tollgate.edgeUrl, provisioned.org.workspace_slug, provisioned.key, 'responses', {
          ...o,
          alias: o.paced ? aliases.paced : aliases.fast,
        }),
    };
  };
  const routes: ResponsesRoute[] = [];
  for (const route of RESPONSES_ROUTES) {
    const system = systemOf(route);
    const problem = (await probe(system.request('responses'))) ?? (await probe(system.request('responses', { stream: true, paced: true })));
    if (problem) ctx.log(`  responses ${route} does not answer 2xx, left out: ${problem}`);
    else routes.push(route);
  }
  const systems = routes.map(systemOf);

  const load: LoadFigures[] = [];
  const streams: StreamFigures[] = [];
  // Rounds alternate the routes, each round starting one route later, so neither drift in the machine's load
  // nor what a route leaves behind for the next (settlement of its calls) lands on one route; each route keeps
  // its median round (one run of a few seconds moved a route's CPU per call by a third on a quiet machine).
  const rotated = <T>(xs: T[], round: number): T[] => xs.map((_, i) => xs[(i + round) % xs.length]!);
  const rounds = ctx.profile.name === 'quick' ? 1 : 3;
  const median = <T>(runs: T[], key: (f: T) => number): T => medianBy(runs, key)!;
  for (const system of systems) await measureLoad(ctx, system, 'responses', 50, ctx.profile.warmS);
  const loadRuns = new Map<string, LoadFigures[]>(systems.map((s) => [s.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const system of rotated(systems, round)) {
      ctx.log(`responses: ${system.name} non-streamed at 50 connections, round ${round} of ${rounds}`);
      loadRuns.get(system.name)!.push(await measureLoad(ctx, system, 'responses', 50, ctx.profile.measureS));
    }
  }
  for (const system of systems) load.push(median(loadRuns.get(system.name)!, (f) => f.cpuUsPerRequest ?? Infinity));
  for (const system of systems) await measureStreams(ctx, system, 'responses', 10, ctx.profile.warmS);
  for (const connections of [1, 50]) {
    const streamRuns = new Map<string, StreamFigures[]>(systems.map((s) => [s.name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const system of rotated(systems, round)) {
        ctx.log(`responses: ${system.name} streamed, ${connections} stream(s), round ${round} of ${rounds}`);
        const seconds = ctx.profile.measureS + (ctx.profile.name === 'quick' ? 1 : 0);
        streamRuns.get(system.name)!.push(await measureStreams(ctx, system, 'responses', connections, seconds));
      }
    }
    for (const system of systems) streams.push(median(streamRuns.get(system.name)!, (f) => f.cpuUsPerEvent ?? Infinity));
  }
  return { routes, load, streams };
}

function reportRoutes(ctx: BenchContext, load: LoadFigures[], streams: StreamFigures[]): void {
  const routeOf = (system: string) => RESPONSES_ROUTES.find((r) => ROUTE_ALIASES[r].system === system)!;
  const table = ctx.report.section('Responses client: pass-through, translated to Chat, two hops to Messages', [
    'provider',
    'kind',
    'conns',
    'req/s or events',
    'p50 / TTFB p50 ms',
    'CPU µs per req / event',
    '÷ pass-through',
    'errors',
  ]);
  /** One row: a route's figure beside the pass-through one of the same kind. */
  const row = (
    system: string,
    kind: string,
    connections: number,
    volume: string,
    p50Us: number,
    cpu: number | undefined,
    pass: number | undefined,
    errors: string,
  ) =>
    table.row(
      ROUTE_ALIASES[routeOf(system)].label,
      kind,
      String(connections),
      volume,
      fmtMs(p50Us),
      cpu === undefined ? '-' : fmtNum(cpu),
      fmtNum(ratio(cpu ?? NaN, pass ?? NaN)),
      errors,
    );
  const passLoad = load.find((f) => f.system === 'tollgate');
  for (const f of load) {
    row(
      f.system,
      'JSON',
      f.connections,
      fmtNum(f.rps),
      f.latencyUs.p50,
      f.cpuUsPerRequest,
      passLoad?.cpuUsPerRequest,
      f.errors ? `${f.errors}/${f.requests}` : '0',
    );
  }
  for (const f of streams) {
    const pass = streams.find((p) => p.system === 'tollgate' && p.connections === f.connections);
    row(f.system, 'SSE', f.connections, String(f.events), f.ttfbUs.p50, f.cpuUsPerEvent, pass?.cpuUsPerEvent, String(f.errors));
  }
  table.note(
    "The proxy's CPU per request (JSON) or per SSE event the client received (SSE: paced upstream, 50 token events 2 ms apart); each route's median of 3 alternating rounds (1 with --quick).",
  );
}

/** The translators' own work, in-process: steady where the end-to-end rows are noisy. */
function reportTranslationWork(ctx: BenchContext): void {
  const quick = ctx.profile.name === 'quick';
  const cost = measureResponsesCost(quick ? 20_000 : 100_000, quick ? 200_000 : 1_000_000);
  ctx.report.data.responsesCost = cost;
  const work = ctx.report.section('Responses translation work in-process (CPU µs, no sockets)', [
    'step',
    ...RESPONSES_ROUTES.map((r) => ROUTE_ALIASES[r].label),
  ]);
  work.row('parse + provider body (+ whole answer rewritten)', ...RESPONSES_ROUTES.map((r) => cost.requestUs[r].toFixed(2)));
  work.row('one provider SSE event: usage tap (+ event rewritten)', ...RESPONSES_ROUTES.map((r) => cost.eventUs[r].toFixed(2)));
  work.note('bench/lib/responses-cost.ts; the difference to pass-through is what translation adds to the end-to-end figures above.');
}

/** A figure counts only when nearly every call or stream of it completed. */
function checkTargets(ctx: BenchContext, load: LoadFigures[], streams: StreamFigures[]): void {
  const perRequest = (system: string) => {
    const f = load.find((x) => x.system === system);
    return f && f.requests > 0 && f.errors <= f.requests * 0.01 ? f.cpuUsPerRequest : undefined;
  };
  const perEvent = (system: string) => {
    const f = streams.find((x) => x.system === system && x.connections === 50);
    return f && f.streams > 0 && f.errors <= f.streams * 0.01 ? f.cpuUsPerEvent : undefined;
  };
  for (const route of RESPONSES_ROUTES.filter((r) => r !== 'passThrough')) {
    const name = ROUTE_ALIASES[route].system;
    for (const [figure, cpuOf] of [
      ['CPU/req translated ÷ pass-through (50 conns)', perRequest],
      ['CPU/SSE event translated ÷ pass-through (50 streams)', perEvent],
    ] as const) {
      const [translated, passThrough] = [cpuOf(name), cpuOf('tollgate')];
      const value = ratio(translated ?? NaN, passThrough ?? NaN);
      ctx.report.check({
        scenario: `responses → ${ROUTE_ALIASES[route].label}`,
        figure,
        value,
        target: `≤ ${RESPONSES_CPU_TARGET.toFixed(2)}×`,
        pass: Number.isFinite(value) ? value <= RESPONSES_CPU_TARGET : undefined,
        note: translated !== undefined && passThrough !== undefined ? undefined : 'not measured or failing',
      });
    }
  }
}
