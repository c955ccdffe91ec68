/**
 * Summarises a V8 .cpuprofile (from BENCH_CPU_PROF_DIR) as text: busy time
 * by package or Tollgate module, and the functions with the most self time.
 *
 *   npx tsx bench/profile-summary.ts /tmp/prof/1234-proxy.js.cpuprofile [--last 10] [--top 30]
 *
 * `--last S` keeps only the final S seconds (the measurement, not start-up).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { last: { type: 'string' }, top: { type: 'string', default: '30' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [--last S] [--top N]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
const top = Number(values.top);
const from = values.last ? profile.endTime - Number(values.last) * 1e6 : -Infinity;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));

/** Where a frame's code lives: a Node internal, a package, a Tollgate module, or V8 itself. */
function category(n: ProfileNode): string {
  const url = n.callFrame.url;
  if (!url) return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (url.includes('node_modules/')) return url.split('node_modules/').pop()!.split('/')[0]!;
  if (url.includes('/dist/')) return url.split('/dist/')[1]!;
  return url.replace(/^file:\/\//, '');
}
const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.startsWith('node:') ? n.callFrame.url : category(n)}:${n.callFrame.lineNumber + 1}`;

const byCategory = new Map<string, number>();
const byFunction = new Map<string, number>();
let t = profile.startTime;
let idle = 0;
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  t += dt;
  if (t < from) return;
  const n = nodes.get(id)!;
  total += dt;
  if (n.callFrame.functionName === '(idle)') {
    idle += dt;
    return;
  }
  const where = category(n);
  const fn = label(n);
  byCategory.set(where, (byCategory.get(where) ?? 0) + dt);
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
});
const busy = total - idle;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const print = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n== ${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${ms(v)} ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}\n`);
  }
};
process.stdout.write(`sampled ${ms(total)}, busy ${ms(busy)} (percentages are of busy time)\n`);
print('self time by module or package', byCategory);
print('self time by function', byFunction);
