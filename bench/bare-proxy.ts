/**
 * The floor any Node proxy can reach: a bare `node:http` pass-through with a
 * keep-alive agent, no parsing, no decisions. Forwards every request to
 * `--upstream` unchanged (method, path, headers minus hop-by-hop) and pipes
 * the answer back.
 *
 *   tsx bench/bare-proxy.ts --port 9100 --upstream http://127.0.0.1:9000
 */
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' }, upstream: { type: 'string' } },
});
if (!values.upstream) {
  process.stderr.write('usage: bare-proxy --upstream http://host:port [--port N] [--host H]\n');
  process.exit(2);
}
const upstream = new URL(values.upstream);
// No socket cap: with one, thousands of long streams would queue behind each other (the `streams` scenario).
const agent = new Agent({ keepAlive: true });
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'];

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  out.host = upstream.host;
  return out;
}

const server = createServer((req, res) => {
  const up = request(
    { agent, host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: forwardable(req.headers) },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, forwardable(upRes.headers));
      upRes.pipe(res);
    },
  );
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`bare proxy listening on http://${values.host}:${port}\n`);
});
