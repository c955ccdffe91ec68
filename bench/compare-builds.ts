/**
 * The proxy of two builds side by side, with the floor, in alternating rounds
 * of one run: CPU per call at 50 connections (the overhead scenario's
 * measurement), so a change is judged against its base on the same machine
 * at the same moment rather than across runs minutes apart.
 *
 *   npx tsx bench/compare-builds.ts --base /tmp/base [--rounds 6] [--seconds 4] [--format chat] [--stream] [--tree] [--base-plain-models]
 *
 * `--base` is another checkout with its own `dist/` (built) and `node_modules`;
 * this checkout's proxy (built if stale) is "head". Both proxies share one
 * control plane (this checkout's) and the bench's fake upstream; with
 * `--tree`, each build runs its own `npm start` and the whole tree's CPU counts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BenchContext, PROFILES, tollgateRequest, tollgateSystem, type Format, type System } from './lib/context.js';
import { provision, startTollgate, type Tollgate } from './lib/tollgate.js';
import { measureLoad } from './scenarios/overhead.js';
import { choosePlacement, ensureBuilt, freePort, readyWhenHealthy, startProcess } from './lib/procs.js';
import { Report } from './lib/report.js';
import { pickLoadTool } from './lib/load.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '4' },
    format: { type: 'string', default: 'chat' },
    connections: { type: 'string', default: '50' },
    // Streamed calls (SSE from the fake upstream) instead of whole answers.
    stream: { type: 'boolean', default: false },
    // A base older than the models file's deployments and Responses fields: give it only the plain aliases.
    'base-plain-models': { type: 'boolean', default: false },
    // Each build's whole `npm start` tree instead of its proxy over one control plane.
    tree: { type: 'boolean', default: false },
  },
});
if (!values.base) throw new Error('--base <checkout with dist/> is required');
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const format = values.format as Format;
const connections = Number(values.connections);
const stream = values.stream;

ensureBuilt();
const placement = choosePlacement();
const ctx = new BenchContext(PROFILES.full, placement, pickLoadTool(undefined), 'split', new Report());
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
process.stdout.write(`compare-builds: ${placement.note}; load average at start ${load()}\n`);

try {
  const floor = await ctx.floor();
  const builds = values.tree ? await trees(values.base) : await proxies(values.base);
  const { base, head } = builds;
  const systems: [string, System][] = [
    ['floor', floor],
    ['base', base],
    ['head', head],
  ];
  for (const [, s] of systems) await measureLoad(ctx, s, format, connections, 5, stream);
  const per: Record<string, number[]> = { floor: [], base: [], head: [] };
  for (let r = 0; r < rounds; r++) {
    // Each round starts one system later, so none always runs right after another.
    const order = systems.map((_, i) => systems[(i + r) % systems.length]!);
    const row: Record<string, number> = {};
    for (const [name, s] of order) {
      const f = await measureLoad(ctx, s, format, connections, seconds, stream);
      if (f.errors) process.stdout.write(`  ${name}: ${f.errors}/${f.requests} errors\n`);
      row[name] = f.cpuUsPerRequest!;
      per[name]!.push(f.cpuUsPerRequest!);
    }
    process.stdout.write(
      `round ${r + 1}: floor ${row.floor!.toFixed(1)}  base ${row.base!.toFixed(1)} (${(row.base! / row.floor!).toFixed(2)}x)  ` +
        `head ${row.head!.toFixed(1)} (${(row.head! / row.floor!).toFixed(2)}x)  head-base ${(row.head! - row.base!).toFixed(1)} µs  load ${load()}\n`,
    );
  }
  // With an even count the mean of the two middle values: the upper one alone leaned every figure up.
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const m = { floor: median(per.floor!), base: median(per.base!), head: median(per.head!) };
  const diffs = per.head!.map((h, i) => h - per.base![i]!);
  process.stdout.write(
    `median µs/call (${format}${stream ? ', streamed' : ''}, ${connections} conns): floor ${m.floor.toFixed(1)}, base ${m.base.toFixed(1)} (${(m.base / m.floor).toFixed(2)}x), ` +
      `head ${m.head.toFixed(1)} (${(m.head / m.floor).toFixed(2)}x); head-base per round median ${median(diffs).toFixed(1)} µs; load ${load()}\n`,
  );
  await builds.stop();
} finally {
  await ctx.close();
}

/** Both builds' proxies over this checkout's control plane. */
async function proxies(baseRoot: string): Promise<{ base: System; head: System; stop(): Promise<void> }> {
  const { system: head, tollgate, provisioned } = await ctx.tollgate();
  const port = await freePort();
  const edgeUrl = `http://127.0.0.1:${port}`;
  const baseModels = values['base-plain-models'] ? { MODELS_FILE: await plainModelsFile(ctx) } : {};
  const baseProc = await startProcess('proxy (base)', process.execPath, [join(baseRoot, 'dist/bin/proxy.js')], {
    cpus: placement.sut,
    env: {
      ...tollgate.env,
      ...baseModels,
      PROXY_PORT: String(port),
      EDGE_BASE_URL: edgeUrl,
      PROXY_DATA_DIR: join(tollgate.dataDir, `proxy-${port}`),
    },
    ready: readyWhenHealthy(`${edgeUrl}/healthz`),
  });
  const slug = provisioned.org.workspace_slug;
  const base: System = {
    name: 'tollgate',
    pid: baseProc.pid,
    controlPlanePid: tollgate.controlPlane?.pid,
    request: (f, o = {}) => tollgateRequest(edgeUrl, slug, provisioned.key, f, o),
  };
  return { base, head, stop: () => baseProc.stop() };
}

/** Each build's `npm start` (both halves, embedded store) as a user runs it; CPU over its whole process tree. */
async function trees(baseRoot: string): Promise<{ base: System; head: System; stop(): Promise<void> }> {
  const plain = values['base-plain-models'];
  const start = async (root: string | undefined, modelsFile: string, models: string[] | undefined, slug: string): Promise<[System, Tollgate]> => {
    const t = await startTollgate({ shape: 'whole', placement, modelsFile, root });
    ctx.track(t.proxy);
    ctx.removeLater(t.dataDir);
    const p = await provision(t, slug, models);
    return [{ ...tollgateSystem(t, p.org.workspace_slug, p.key), name: 'whole', tree: true }, t];
  };
  const plainFile = plain ? await plainModelsFile(ctx) : await ctx.models();
  const plainAliases = plain
    ? (JSON.parse(readFileSync(plainFile, 'utf8')) as { models: { alias: string }[] }).models.map((m) => m.alias)
    : undefined;
  const [head, headTree] = await start(undefined, await ctx.models(), undefined, 'head');
  const [base, baseTree] = await start(baseRoot, plainFile, plainAliases, 'base');
  return {
    base,
    head,
    stop: async () => {
      await baseTree.stop();
      await headTree.stop();
    },
  };
}

/** The bench's models file with only single-deployment aliases on providers that speak Chat and Messages. */
async function plainModelsFile(context: BenchContext): Promise<string> {
  const full = JSON.parse(readFileSync(await context.models(), 'utf8')) as {
    providers: Record<string, Record<string, unknown>>;
    models: { deployments?: unknown }[];
  };
  const providers = Object.fromEntries(Object.entries(full.providers).map(([name, { responses_base_url: _, ...rest }]) => [name, rest]));
  const file = join(context.dir, 'models-plain.json');
  writeFileSync(file, JSON.stringify({ ...full, providers, models: full.models.filter((m) => !m.deployments) }));
  return file;
}
