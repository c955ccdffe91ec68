/**
 * Load generator child (fallback when wrk is absent): autocannon in its own
 * process. Its own histogram has 1 ms resolution, too coarse for overhead in
 * the tens of microseconds, so every response time is recorded here in µs.
 */
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from '../lib/load.js';
import { latencyOf, Samples } from '../lib/stats.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const samples = new Samples();
let non2xx = 0;

const instance = autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  body: spec.body,
  connections: spec.connections,
  duration: spec.durationS,
  timeout: 10,
});
instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
  if (statusCode < 200 || statusCode > 299) non2xx++;
  else samples.push(responseTimeMs * 1000);
});
instance.on('done', (r: autocannon.Result) => {
  const requests = r.requests.total;
  const errors = r.errors + r.timeouts + non2xx;
  const durationS = r.duration;
  const result: LoadResult = {
    tool: 'autocannon',
    requests,
    errors,
    non2xx,
    durationS,
    rps: (requests - non2xx) / durationS,
    latencyUs: latencyOf(samples.values()),
  };
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
});
