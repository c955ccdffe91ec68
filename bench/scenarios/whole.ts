import { probe, tollgateSystem, type BenchContext, type System } from '../lib/context.js';
import { cpuMicros, processTree, pssBytes, rssBytes, treePssBytes, treeRssBytes } from '../lib/procs.js';
import { readFileSync } from 'node:fs';
import { fmtMiB, fmtMs, fmtNum, ratio } from '../lib/report.js';
import { provision, startTollgate } from '../lib/tollgate.js';
import { measureLoad, type LoadFigures } from './overhead.js';

/**
 * Scenario 8: Tollgate the way a user runs it — `npm start` (npm, its
 * prestart build check, both halves in one process on embedded PGlite,
 * compiled) pinned to the SUT core, its CPU summed over the whole process
 * tree — beside the bare pass-through and the split shape (proxy and
 * control plane apart, their CPU added), in one run. Chat Completions,
 * non-streamed, at 1 and 50 connections; p99 and p99.9 are the tail.
 * The tree's memory is given as the sum of RSS and of PSS (shared pages,
 * chiefly the node executable's code, counted once), and per process; its
 * CPU per call also per process, so the control plane's share shows.
 */
export async function wholeScenario(ctx: BenchContext): Promise<void> {
  const modelsFile = await ctx.models();
  const bare = await ctx.bare();
  const split = (await ctx.tollgate()).system;
  ctx.log('whole: starting `npm start`');
  const tollgate = await startTollgate({ shape: 'whole', placement: ctx.placement, modelsFile });
  ctx.track(tollgate.proxy);
  ctx.removeLater(tollgate.dataDir);
  const provisioned = await provision(tollgate, 'bench-whole');
  const whole: System = { ...tollgateSystem(tollgate, provisioned.org.workspace_slug, provisioned.key), name: 'whole', tree: true };
  // Idle RSS after start: started, provisioned, nothing served yet, a moment to settle.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const rssIdle = treeRssBytes(whole.pid!);
  const pssIdle = treePssBytes(whole.pid!);
  const idleByProcess = memoryByProcess(whole.pid!);
  const systems = [bare, split, whole];
  for (const s of systems) {
    const problem = await probe(s.request('chat'));
    if (problem) ctx.log(`  ${s.name} does not answer 2xx: ${problem}`);
  }
  for (const s of systems) await measureLoad(ctx, s, 'chat', 50, ctx.profile.freshWarmS);
  const rssWarm = treeRssBytes(whole.pid!);
  const pssWarm = treePssBytes(whole.pid!);
  const figures: WholeFigures[] = [];
  for (const connections of [1, 50]) {
    for (const s of systems) {
      ctx.log(`whole: ${s.name === 'tollgate' ? ctx.shape : s.name} chat at ${connections} connection(s)`);
      if (s !== whole) figures.push(await measureLoad(ctx, s, 'chat', connections, ctx.profile.measureS));
      else {
        const before = cpuByRole(whole.pid!);
        const f = await measureLoad(ctx, s, 'chat', connections, ctx.profile.measureS);
        const after = cpuByRole(whole.pid!);
        const completed = f.requests - f.errors;
        const perCall = Object.fromEntries(Object.entries(after).map(([r, us]) => [r, completed > 0 ? (us - (before[r] ?? 0)) / completed : NaN]));
        figures.push({ ...f, cpuUsPerRequestByProcess: perCall });
      }
    }
  }
  const rssAfter = treeRssBytes(whole.pid!);
  const pssAfter = treePssBytes(whole.pid!);
  const afterByProcess = memoryByProcess(whole.pid!);
  await tollgate.stop();

  ctx.report.data.whole = { figures, rssIdle, rssWarm, rssAfter, pssIdle, pssWarm, pssAfter, idleByProcess, afterByProcess };
  const table = ctx.report.section('Whole: `npm start` as a user runs it, beside bare and the split halves (Chat Completions, non-streamed)', [
    'system',
    'conns',
    'req/s',
    'p50 ms',
    'p99 ms',
    'p99.9 ms',
    'max ms',
    'CPU µs/req',
    '÷ bare',
    'errors',
  ]);
  const bareAt = (c: number) => figures.find((f) => f.system === 'bare' && f.connections === c);
  for (const f of figures) {
    const label = f.system === 'tollgate' ? `${ctx.shape} (proxy + CP)` : f.system === 'whole' ? 'npm start (tree)' : f.system;
    table.row(
      label,
      String(f.connections),
      fmtNum(f.rps),
      fmtMs(f.latencyUs.p50),
      fmtMs(f.latencyUs.p99),
      fmtMs(f.latencyUs.p999),
      fmtMs(f.latencyUs.max),
      fmtNum(total(f)),
      `${fmtNum(ratio(total(f), bareAt(f.connections)?.cpuUsPerRequest ?? NaN))}×`,
      f.errors ? `${f.errors}/${f.requests}` : '0',
    );
  }
  table.note(
    `npm start tree RSS: ${fmtMiB(rssIdle)} MiB idle after start, ${fmtMiB(rssWarm)} MiB after warm-up, ${fmtMiB(rssAfter)} MiB after the measurements.`,
  );
  table.note(
    `npm start tree PSS (shared pages once): ${fmtMiB(pssIdle)} MiB idle after start, ${fmtMiB(pssWarm)} MiB after warm-up, ${fmtMiB(pssAfter)} MiB after the measurements.`,
  );
  const perProcess = (list: typeof idleByProcess) => list.map((p) => `${p.role} ${fmtMiB(p.rss)} / ${fmtMiB(p.pss)}`).join('; ');
  table.note(`Per process (RSS / PSS MiB), idle after start: ${perProcess(idleByProcess)}; after the measurements: ${perProcess(afterByProcess)}.`);
  for (const f of figures) {
    if (!f.cpuUsPerRequestByProcess) continue;
    const parts = Object.entries(f.cpuUsPerRequestByProcess).map(([r, us]) => `${r} ${fmtNum(us)}`);
    table.note(`npm start CPU µs/req at ${f.connections} connection(s), per process: ${parts.join('; ')}.`);
  }
  table.note('CPU µs/req: bare = its process; split = proxy + control plane; npm start = every process of the tree (npm, node).');
  checkWhole(ctx, figures, rssIdle, pssIdle);
}

/** The targets: the tree's CPU and p99 against bare at 50 connections, its memory idle after start. */
function checkWhole(ctx: BenchContext, figures: WholeFigures[], rssIdle: number, pssIdle: number): void {
  const w50 = figures.find((f) => f.system === 'whole' && f.connections === 50);
  const b50 = figures.find((f) => f.system === 'bare' && f.connections === 50);
  const ok = (f: WholeFigures | undefined) => f && f.errors <= f.requests * 0.01;
  const measured = ok(w50) && ok(b50);
  const note = measured ? undefined : 'not measured or failing';
  const value = ratio(w50 ? total(w50) : NaN, b50?.cpuUsPerRequest ?? NaN);
  ctx.report.check({
    scenario: 'whole',
    figure: 'npm start tree CPU/req ÷ bare (50 conns)',
    value,
    target: '≤ 1.50×',
    pass: measured && Number.isFinite(value) ? value <= 1.5 : undefined,
    note,
  });
  const p99 = ratio(w50?.latencyUs.p99 ?? NaN, b50?.latencyUs.p99 ?? NaN);
  ctx.report.check({
    scenario: 'whole',
    figure: 'npm start p99 ÷ bare (50 conns)',
    value: p99,
    target: '≤ 2.00×',
    pass: measured && Number.isFinite(p99) ? p99 <= 2 : undefined,
    note,
  });
  const idleMiB = rssIdle / 1024 / 1024;
  ctx.report.check({
    scenario: 'whole',
    figure: 'npm start tree RSS idle after start (MiB)',
    value: idleMiB,
    target: '≤ 300',
    pass: idleMiB > 0 ? idleMiB <= 300 : undefined,
  });
  const idlePssMiB = pssIdle / 1024 / 1024;
  ctx.report.check({
    scenario: 'whole',
    figure: 'npm start tree PSS idle after start (MiB)',
    value: idlePssMiB,
    target: '≤ 300',
    pass: idlePssMiB > 0 ? idlePssMiB <= 300 : undefined,
    note: 'shared pages (the node executable) once; the RSS sum counts them per process',
  });
}

type WholeFigures = LoadFigures & { cpuUsPerRequestByProcess?: Record<string, number> };

/** CPU per call of every process: the proxy's plus the control plane's when they run apart. */
const total = (f: WholeFigures) => (f.cpuUsPerRequest ?? NaN) + (f.controlPlaneCpuUsPerRequest ?? 0);

/** Which part of `npm start`'s tree a process is, from its command line. */
function role(pid: number): string {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return `pid ${pid}`;
  }
  if (cmdline.includes('control-plane-child')) return 'control plane';
  if (cmdline.includes('bin/start.js')) return cmdline.startsWith('sh ') || cmdline.startsWith('/bin/sh ') ? 'sh' : 'proxy';
  if (cmdline.includes('npm')) return 'npm';
  return cmdline.split(' ')[0]!.split('/').pop() ?? `pid ${pid}`;
}

/** RSS and PSS of each process of the tree, named by its role. */
function memoryByProcess(root: number): { role: string; rss: number; pss: number }[] {
  return processTree(root).map((pid) => ({ role: role(pid), rss: safely(rssBytes, pid), pss: safely(pssBytes, pid) }));
}

/** CPU µs so far of each part of the tree, by role (processes of the same role added). */
function cpuByRole(root: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pid of processTree(root)) out[role(pid)] = (out[role(pid)] ?? 0) + safely(cpuMicros, pid);
  return out;
}

/** A /proc figure of a process that may have ended meanwhile (0 then). */
function safely(read: (pid: number) => number, pid: number): number {
  try {
    return read(pid);
  } catch {
    return 0;
  }
}
