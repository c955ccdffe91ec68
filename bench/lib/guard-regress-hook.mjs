// The guard's self-test (`bench/guard.ts --regress 0.15`) preloads this into
// Tollgate's processes only (NODE_OPTIONS=--import): every request an HTTP
// server of the process receives first spins the CPU for BENCH_GUARD_REGRESS
// (a share) of what the process spent per request so far, its own spinning
// left out, so the process costs that share more per call: a regression the
// guard must catch. Nothing in Tollgate's code reads the variable.
import http from 'node:http';

const share = Number(process.env.BENCH_GUARD_REGRESS);
if (share > 0) {
  const cpuUs = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  // Start-up is not per-call cost: the average counts from the 500th request on.
  const from = 500;
  let requests = 0;
  let spunUs = 0;
  let atFromUs = 0;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request' && ++requests > from) {
      const t0 = cpuUs();
      if (requests === from + 1) atFromUs = t0;
      const calls = requests - from - 1;
      const ownUs = calls > 0 ? (t0 - atFromUs - spunUs) / calls : 0;
      const until = t0 + share * ownUs;
      while (cpuUs() < until);
      spunUs += cpuUs() - t0;
    }
    return emit.call(this, event, ...args);
  };
}
