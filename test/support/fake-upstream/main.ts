/**
 * Runs the fake upstream alone, for demos and benchmarks:
 *   tsx test/support/fake-upstream/main.ts [--port 9000] [--host 127.0.0.1]
 *     [--output-tokens 12] [--event-delay-ms 0] [--formats all|both|chat|messages|responses|gemini] [--require-key]
 * Without --require-key it answers calls that carry no provider key, so the
 * README's walk-through works with nothing set in the environment.
 */
import { parseArgs } from 'node:util';
import { startFakeUpstream } from './server.js';
import type { FakeFormats, OkBehavior } from './types.js';

function nonNegativeInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`--${name} must be a non-negative integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return value;
}

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'output-tokens': { type: 'string' },
    'event-delay-ms': { type: 'string' },
    formats: { type: 'string' },
    'require-key': { type: 'boolean' },
  },
  strict: true,
});

const FORMATS: readonly FakeFormats[] = ['all', 'both', 'chat', 'messages', 'responses', 'gemini'];
const formats = (values.formats ?? 'all') as FakeFormats;
if (!FORMATS.includes(formats)) {
  process.stderr.write(`--formats must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(formats)}\n`);
  process.exit(2);
}

const defaultBehavior: OkBehavior = {
  kind: 'ok',
  outputTokens: nonNegativeInteger('output-tokens', values['output-tokens'], 12),
  eventDelayMs: nonNegativeInteger('event-delay-ms', values['event-delay-ms'], 0),
};
const fake = await startFakeUpstream({
  port: nonNegativeInteger('port', values.port, 9000),
  host: values.host ?? '127.0.0.1',
  defaultBehavior,
  recordRequests: false,
  formats,
  requireKey: values['require-key'] ?? false,
});
process.stdout.write(`fake upstream listening on ${fake.url}\n`);
if (!values['require-key']) process.stdout.write('calls without a provider key are accepted (--require-key refuses them with 401)\n');

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  fake.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
