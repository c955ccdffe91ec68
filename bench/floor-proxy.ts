/**
 * The floor for this stack: the proxy's own parts (a `node:http` server, an
 * undici pool to the provider) with every decision taken out. It forwards
 * each request to `--upstream` unchanged (method, path, headers minus
 * hop-by-hop) and streams the answer back through undici's `stream`, which
 * writes the upstream's body straight into the client's response; the
 * request body is collected first, as the proxy collects it. What the
 * real proxy spends above this is the price of its decisions.
 *
 *   tsx bench/floor-proxy.ts --port 9100 --upstream http://127.0.0.1:9000
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' }, upstream: { type: 'string' } },
});
if (!values.upstream) {
  process.stderr.write('usage: floor-proxy --upstream http://host:port [--port N] [--host H]\n');
  process.exit(2);
}
const upstream = new URL(values.upstream);
// No connection cap, as the proxy's own pools: a cap would queue long streams behind each other.
const pool = new Pool(upstream.origin, { keepAliveTimeout: 30_000 });
/** undici refuses these on a request, and they must not be copied onto an answer either. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'expect'];

function forwardable<H extends IncomingHttpHeaders | Record<string, string | string[] | undefined>>(headers: H): H {
  const out = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  return out;
}

const server = createServer((req, res) => {
  // The body is collected first, as the proxy does (it reads the model from it): a ~1 KB body
  // sent as one buffer is cheaper for undici than a streamed one.
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers = forwardable(req.headers);
    headers.host = upstream.host;
    pool
      .stream(
        {
          method: req.method as 'POST',
          path: req.url ?? '/',
          headers: headers as Record<string, string>,
          body: chunks.length === 0 ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        },
        ({ statusCode, headers: upHeaders }) => {
          res.writeHead(statusCode, forwardable(upHeaders) as OutgoingHttpHeaders);
          // A client gone mid-answer destroys `res`, which ends the upstream request with it.
          return res;
        },
      )
      .catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`floor proxy listening on http://${values.host}:${port}\n`);
});
