// The guard's self-test (`bench/guard.ts --regress 0.15`) preloads this into
// Tollgate's processes only (NODE_OPTIONS=--import): once the process has
// served 4,000 requests, every request an HTTP server of it receives first
// spins the CPU for BENCH_GUARD_REGRESS (a share) of what it spent per
// request over requests 2,000 to 4,000, so the process costs that share more
// per call: a regression the guard must catch. Nothing in Tollgate's code
// reads the variable.
import http from 'node:http';

const share = Number(process.env.BENCH_GUARD_REGRESS);
if (share > 0) {
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
  let turnsPerUs = 0;
  // The fastest of five trials: on a shared VM the CPU clock also counts time
  // the host took away, which only makes a trial look slower.
  const calibrate = () => {
    spin(1_000_000); // compiled before it is timed
    for (let trial = 0; trial < 5; trial++) {
      const t0 = cpuUs();
      spin(20_000_000);
      turnsPerUs = Math.max(turnsPerUs, 20_000_000 / Math.max(1, cpuUs() - t0));
    }
  };
  // The process's own cost per request is taken once, over requests 2,000 to
  // 4,000 (start-up left out, nothing spun yet), so the spin cannot feed on itself.
  const from = 2_000;
  const to = 4_000;
  let requests = 0;
  let atFromUs = 0;
  let turns = 0;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      requests++;
      if (requests === from) atFromUs = cpuUs();
      else if (requests === to) {
        const ownUs = (cpuUs() - atFromUs) / (to - from);
        calibrate();
        turns = Math.round(share * ownUs * turnsPerUs);
        if (process.env.BENCH_GUARD_REGRESS_DEBUG)
          process.stderr.write(`regress hook: ${ownUs.toFixed(1)} µs per request, spinning ${(turns / turnsPerUs).toFixed(1)} µs\n`);
      } else if (turns) spin(turns);
    }
    return emit.call(this, event, ...args);
  };
  process.on('exit', () => sink);
}
