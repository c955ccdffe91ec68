import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into a child process (`--import ./test/support/loop-delay.ts`):
 * watches how long its event loop is held (perf_hooks, 1 ms resolution)
 * and the CPU time of its main thread; on SIGUSR2 it writes the figures
 * since the last signal to stderr as one line
 * `loop-delay {"p50":…,"p99":…,"max":…,"cpuMs":…}` (milliseconds).
 */
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
let cpu = process.threadCpuUsage();
process.on('SIGUSR2', () => {
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const used = process.threadCpuUsage(cpu);
  cpu = process.threadCpuUsage();
  const cpuMs = Math.round((used.user + used.system) / 1000);
  process.stderr.write(`loop-delay ${JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), cpuMs })}\n`);
  h.reset();
});
