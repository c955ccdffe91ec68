/**
 * What reading each connection's first bytes for the HTTP/2 preface
 * (proxy/start/http2-cleartext.ts) costs HTTP/1.1: two servers, one with the
 * sniff and one without, each in its own process answering a tiny 200, in
 * alternating rounds of one run; each round's figure is the server's own
 * CPU per request. Fresh connections (one request each) show the cost per
 * connection; `--keep-alive` shows what a request pays on a kept connection.
 *
 *   npx tsx bench/sniff-cost.ts [--requests 3000] [--rounds 8] [--keep-alive]
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { createServer } from '../shared/node-http.js';
import { serveCleartextHttp2 } from '../proxy/start/http2-cleartext.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '8' },
    'keep-alive': { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

/** The child: a server with (`on`) or without the sniff; answers its CPU time when asked. */
function serve(sniff: boolean): void {
  const handle = (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(200, { 'content-length': 2 }).end('ok');
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  if (sniff) serveCleartextHttp2(server, handle, 65_000);
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', () => {
    const u = process.cpuUsage();
    process.send!({ cpuUs: u.user + u.system });
  });
}

async function main(): Promise<void> {
  const n = Number(values.requests);
  const rounds = Number(values.rounds);
  const keepAlive = values['keep-alive'];
  const start = (mode: string) =>
    new Promise<{ child: ChildProcess; port: number }>((resolve) => {
      const child = fork(fileURLToPath(import.meta.url), ['--child', mode]);
      child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    });
  const cpu = (c: ChildProcess) =>
    new Promise<number>((resolve) => {
      c.once('message', (m: { cpuUs: number }) => resolve(m.cpuUs));
      c.send('cpu');
    });
  /** `n` requests, 8 at a time: each on a connection of its own, or on 8 kept ones. */
  const load = async (port: number) => {
    const dispatcher = new Agent({ pipelining: keepAlive ? 1 : 0, connections: 8 });
    let next = 0;
    const worker = async () => {
      while (next++ < n) await (await request(`http://127.0.0.1:${port}/`, { dispatcher, reset: !keepAlive })).body.text();
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await dispatcher.close();
  };
  const off = await start('off');
  const on = await start('on');
  await load(off.port);
  await load(on.port);
  const per: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let r = 0; r < rounds; r++) {
    const order: ['off' | 'on', typeof on][] =
      r % 2
        ? [
            ['on', on],
            ['off', off],
          ]
        : [
            ['off', off],
            ['on', on],
          ];
    for (const [name, s] of order) {
      const before = await cpu(s.child);
      await load(s.port);
      per[name].push(((await cpu(s.child)) - before) / n);
    }
    process.stdout.write(
      `round ${r + 1}: off ${per.off.at(-1)!.toFixed(1)} µs  on ${per.on.at(-1)!.toFixed(1)} µs  load ${loadavg()[0]!.toFixed(2)}\n`,
    );
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const paired = per.on.map((v, i) => v - per.off[i]!);
  process.stdout.write(
    `${keepAlive ? 'kept connections' : 'a connection per request'}: median µs/request off ${median(per.off).toFixed(1)}, on ${median(per.on).toFixed(1)}; ` +
      `on − off per round, median ${median(paired).toFixed(2)} µs (${n} requests a round, ${rounds} rounds)\n`,
  );
  off.child.kill();
  on.child.kill();
}

if (values.child) serve(values.child === 'on');
else await main();
