/**
 * The fake upstream as the bench runs it: the test suite's fake provider
 * with a chosen default answer (how many tokens, how far apart the SSE
 * events are), since a proxy may not forward test-only headers to select it.
 * Its request log is cleared every second so a soak does not grow it.
 *
 *   tsx bench/fake-upstream.ts --port 9000 [--output-tokens 50 --event-delay-ms 2]
 */
import { parseArgs } from 'node:util';
import { startFakeUpstream } from '../test/support/fake-upstream/index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'output-tokens': { type: 'string' },
    'event-delay-ms': { type: 'string' },
  },
});
const outputTokens = values['output-tokens'] === undefined ? undefined : Number(values['output-tokens']);
const eventDelayMs = values['event-delay-ms'] === undefined ? undefined : Number(values['event-delay-ms']);
const upstream = await startFakeUpstream({
  port: Number(values.port),
  host: values.host,
  defaultBehavior: { kind: 'ok', outputTokens, eventDelayMs },
});
setInterval(() => upstream.reset(), 1000).unref();
process.stdout.write(`fake upstream listening on ${upstream.url}\n`);
const stop = () => void upstream.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
