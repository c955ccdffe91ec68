// The guard's self-test (`bench/guard.ts --regress 0.15`) preloads this into
// Tollgate's processes only (NODE_OPTIONS=--import). Each proxy process that
// loads it writes its pid into BENCH_GUARD_REGRESS_DIR; the guard signals those
// pids (SIGUSR2) once when its warm-up is done and once after a calibration
// pass over every measured path. Between the two signals the hook takes the
// process's own CPU per request, code already warm; from the second on,
// every request an HTTP server of it receives first spins the CPU for
// BENCH_GUARD_REGRESS (a share) of that, so the process costs that share
// more per call: a regression the guard must catch. What it spins it writes
// into its pid's file, for the guard to report. Nothing in Tollgate's code
// reads these variables.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const share = Number(process.env.BENCH_GUARD_REGRESS);
const dir = process.env.BENCH_GUARD_REGRESS_DIR;
// The regression is a busy loop in a proxy step, so only the proxy's process
// spins: `dist/bin/proxy.js`, or `dist/bin/start.js`, where `npm start` runs
// the proxy (its control-plane child, npm and the build check do not). A
// control plane made slower would also starve the load generator on its core,
// and the guard would then read that, not the slip. Worker threads (the
// proxy's body worker) preload it too; they serve no HTTP.
const proxy = /[\\/]dist[\\/]bin[\\/](proxy|start)\.js$/.test(process.argv[1] ?? '');
if (share > 0 && dir && proxy && isMainThread) {
  const cpuUs = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  // The process's CPU clock may tick coarsely (10 ms here): spinning until it
  // moves overshoots, so the spin is a count of loop turns, calibrated once
  // over a span long enough for the ticks to average out.
  let sink = 0;
  const spin = (turns) => {
    for (let i = 0; i < turns; i++) sink = (sink + i) | 0;
  };
  // The fastest of five trials: on a shared VM the CPU clock also counts time
  // the host took away, which only makes a trial look slower.
  const turnsPerUs = () => {
    spin(1_000_000); // compiled before it is timed
    let best = 0;
    for (let trial = 0; trial < 5; trial++) {
      const t0 = cpuUs();
      spin(20_000_000);
      best = Math.max(best, 20_000_000 / Math.max(1, cpuUs() - t0));
    }
    return best;
  };
  let requests = 0;
  let mark;
  let turns = 0;
  process.on('SIGUSR2', () => {
    if (!mark) {
      mark = { cpu: cpuUs(), requests };
      return;
    }
    if (turns) return;
    const served = requests - mark.requests;
    const ownUs = (cpuUs() - mark.cpu) / Math.max(1, served);
    turns = Math.max(1, Math.round(share * ownUs * turnsPerUs()));
    // What it spins is written beside its pid, for the guard to report.
    writeFileSync(join(dir, String(process.pid)), JSON.stringify({ ownUs, served, spinUs: share * ownUs }));
  });
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      requests++;
      if (turns) spin(turns);
    }
    return emit.call(this, event, ...args);
  };
  writeFileSync(join(dir, String(process.pid)), '');
  process.on('exit', () => sink);
}
