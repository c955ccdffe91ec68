import { probe, translatedSystem, type BenchContext, type Format, type System } from '../lib/context.js';
import { fmtMs, fmtNum, ratio } from '../lib/report.js';
import { measureTranslateCost } from '../lib/translate-cost.js';
import { measureLoad, type LoadFigures } from './overhead.js';
import { measureStreams, type StreamFigures } from './streaming.js';

/**
 * Translation beside pass-through, in one run: the same Tollgate, the same
 * fake upstreams and bodies; only the alias differs (its provider lacks the
 * client's format). A format whose translated probe fails (e.g. a direction
 * not built yet) is reported and left out.
 */
export async function translationScenario(ctx: BenchContext): Promise<void> {
  await ctx.upstream();
  const passThrough = (await ctx.tollgate()).system;
  const translated = translatedSystem(passThrough);
  const formats: Format[] = [];
  for (const format of ['chat', 'messages'] as Format[]) {
    const problem = (await probe(translated.request(format))) ?? (await probe(translated.request(format, { stream: true, paced: true })));
    if (problem) ctx.log(`  translated ${format} does not answer 2xx, left out: ${problem}`);
    else formats.push(format);
  }
  ctx.report.data.translationFormats = formats;
  const systems: System[] = [passThrough, translated];

  const load: LoadFigures[] = [];
  const streams: StreamFigures[] = [];
  for (const format of formats) {
    for (const system of systems) await measureLoad(ctx, system, format, 50, ctx.profile.warmS);
    // Alternate the two so drift in the shared machine's load hits both alike.
    for (const system of systems) {
      ctx.log(`translation: ${system.name} ${format} non-streamed at 50 connections`);
      load.push(await measureLoad(ctx, system, format, 50, ctx.profile.measureS));
    }
    for (const system of systems) await measureStreams(ctx, system, format, 10, ctx.profile.warmS);
    for (const connections of [1, 50]) {
      for (const system of systems) {
        ctx.log(`translation: ${system.name} ${format} streamed, ${connections} stream(s)`);
        streams.push(await measureStreams(ctx, system, format, connections, ctx.profile.measureS + (ctx.profile.name === 'quick' ? 1 : 0)));
      }
    }
  }
  ctx.report.data.translation = { load, streams };

  const table = ctx.report.section('Translation beside pass-through (client format → provider lacking it)', [
    'system',
    'client format',
    'kind',
    'conns',
    'req/s or events',
    'p50 / TTFB p50 ms',
    'CPU µs per req / event',
    'errors',
  ]);
  const row = (
    f: { system: string; format: Format; connections: number },
    kind: string,
    volume: string,
    p50Us: number,
    cpu: number | undefined,
    errors: string,
  ) => table.row(f.system, f.format, kind, String(f.connections), volume, fmtMs(p50Us), cpu === undefined ? '-' : fmtNum(cpu), errors);
  for (const f of load) row(f, 'JSON', fmtNum(f.rps), f.latencyUs.p50, f.cpuUsPerRequest, f.errors ? `${f.errors}/${f.requests}` : '0');
  for (const f of streams) row(f, 'SSE', String(f.events), f.ttfbUs.p50, f.cpuUsPerEvent, String(f.errors));
  table.note(
    'translated = the same Tollgate calling an alias whose provider speaks only the other format (request, answer and each SSE event rewritten).',
  );
  table.note('SSE rows: paced upstream (50 token events 2 ms apart); CPU per event delivered to the client.');

  // The translators' own work, in-process: what the end-to-end rows above add, without the machine's noise.
  const cost = measureTranslateCost(ctx.profile.name === 'quick' ? 20_000 : 100_000, ctx.profile.name === 'quick' ? 200_000 : 1_000_000);
  ctx.report.data.translationCost = cost;
  const work = ctx.report.section('Translation work in-process (Chat client, Messages provider; CPU µs, no sockets)', [
    'step',
    'pass-through',
    'translated',
    'added',
  ]);
  work.row(
    'parse + provider body (+ whole answer rewritten)',
    cost.requestUs.passThrough.toFixed(2),
    cost.requestUs.translated.toFixed(2),
    (cost.requestUs.translated - cost.requestUs.passThrough).toFixed(2),
  );
  work.row(
    'one SSE event: usage tap (+ event rewritten)',
    cost.eventUs.passThrough.toFixed(2),
    cost.eventUs.translated.toFixed(2),
    (cost.eventUs.translated - cost.eventUs.passThrough).toFixed(2),
  );
  work.note(
    'Measured in the bench driver with bench/lib/translate-cost.ts; add the "added" column to the proxy\'s end-to-end CPU per request / event for the translated figure.',
  );

  const okLoad = (system: string, format: Format) => {
    const f = load.find((x) => x.system === system && x.format === format);
    return f && f.errors <= f.requests * 0.01 ? f : undefined;
  };
  const okStream = (system: string, format: Format, connections: number) => {
    const f = streams.find((x) => x.system === system && x.format === format && x.connections === connections);
    return f && f.streams > 0 && f.errors <= f.streams * 0.01 ? f : undefined;
  };
  for (const format of formats) {
    const scenario = `translation ${format} client`;
    const [p, t] = [okLoad('tollgate', format), okLoad('translated', format)];
    const cpu = ratio(t?.cpuUsPerRequest ?? NaN, p?.cpuUsPerRequest ?? NaN);
    ctx.report.check({
      scenario,
      figure: 'CPU/req translated ÷ pass-through (50 conns)',
      value: cpu,
      target: '≤ 1.30×',
      pass: Number.isFinite(cpu) ? cpu <= 1.3 : undefined,
      note: p && t ? undefined : 'not measured or failing',
    });
    const [ps, ts] = [okStream('tollgate', format, 50), okStream('translated', format, 50)];
    const ev = ratio(ts?.cpuUsPerEvent ?? NaN, ps?.cpuUsPerEvent ?? NaN);
    ctx.report.check({
      scenario,
      figure: 'CPU/SSE event translated ÷ pass-through (50 streams)',
      value: ev,
      target: '≤ 2.00×',
      pass: Number.isFinite(ev) ? ev <= 2 : undefined,
      note: ps && ts ? undefined : 'not measured or failing',
    });
    const [p1, t1] = [okStream('tollgate', format, 1), okStream('translated', format, 1)];
    const added = p1 && t1 ? (t1.ttfbUs.p50 - p1.ttfbUs.p50) / 1000 : NaN;
    ctx.report.check({
      scenario,
      figure: 'TTFB p50 ms translated − pass-through (1 stream)',
      value: added,
      target: '≤ 0.5 ms',
      pass: Number.isFinite(added) ? added <= 0.5 : undefined,
      note: p1 && t1 ? undefined : 'not measured or failing',
    });
  }
}
