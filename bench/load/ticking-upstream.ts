/**
 * A provider for the `streams` scenario: every Chat Completions call is
 * answered as a slow stream, one event each `--interval-ms`, as many events
 * as the request's `max_tokens` (capped at 3,600). Each event's text is the
 * moment it was written, in nanoseconds on the monotonic clock every process
 * of this machine shares (`t<ns>`), so the client can tell how late the
 * event reached it. The stream ends with a usage chunk and `[DONE]`, as
 * OpenAI's does, so the proxy bills it as it would a real one.
 *
 *   node --import tsx bench/load/ticking-upstream.ts --port 9400 [--interval-ms 1000]
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { endFrames, eventsAsked, tickFrame } from '../lib/ticks.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'interval-ms': { type: 'string', default: '1000' },
  },
});
const intervalMs = Number(values['interval-ms']);
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    const events = eventsAsked(body);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const send = () => {
      if (res.destroyed) return clearInterval(timer);
      res.write(tickFrame(process.hrtime.bigint()));
      if (++sent === events) {
        clearInterval(timer);
        res.end(endFrames(events));
      }
    };
    const timer = setInterval(send, intervalMs);
    send();
    res.on('close', () => clearInterval(timer));
  });
});
server.keepAliveTimeout = 65_000;
// Thousands of connections arrive within seconds: a deep accept queue keeps them from being refused.
server.listen({ port: Number(values.port), host: values.host, backlog: 8192 }, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`ticking upstream listening on http://${values.host}:${port}\n`);
});
