// Preloaded (NODE_OPTIONS=--import) into Tollgate's processes when BENCH_CPU_PROF_DIR
// is set: samples the process's CPU from start to exit and writes a V8 .cpuprofile
// (Chrome DevTools, speedscope) named for the process. `node --cpu-prof` would do
// the same, but Node refuses it in NODE_OPTIONS, and `npm start` has to pass it on.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { basename } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 250 });
session.post('Profiler.start');
process.on('exit', () => {
  // A session on this thread answers synchronously, so the profile is written before exit.
  session.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(`${dir}/${process.pid}-${basename(process.argv[1] ?? 'node')}.cpuprofile`, JSON.stringify(result.profile));
  });
});
