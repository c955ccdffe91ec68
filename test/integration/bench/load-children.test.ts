import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBatch } from '../../../bench/lib/batch.js';
import { runChild } from '../../../bench/lib/load.js';
import { nodeArgs, readyWhenPrinted, REPO_ROOT, startProcess, type Proc } from '../../../bench/lib/procs.js';
import { startRedisCounter } from '../../../bench/lib/redis-counter.js';
import { runStreams } from '../../../bench/lib/stream.js';
import { tickFrame } from '../../../bench/lib/ticks.js';
import type { StreamsResult, StreamsSpec } from '../../../bench/load/streams-client.js';
import type { SettlementResult, SettlementSpec } from '../../../bench/scenarios/settlement-child.js';

async function listen(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('bench load children and the bare proxy', function () {
  this.timeout(60_000);
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  for (const name of ['bare', 'floor'] as const) {
    it(`${name} proxy forwards method, path, query, body and status, and answers with the upstream headers`, async () => {
      const seen: { method?: string; url?: string; body?: string; auth?: string } = {};
      const up = await listen((req, body, res) => {
        Object.assign(seen, { method: req.method, url: req.url, body, auth: req.headers.authorization });
        res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.end('{"ok":true}');
      });
      closers.push(() => new Promise((r) => up.server.close(() => r())));
      const [node, args] = nodeArgs(`bench/${name}-proxy.ts`, ['--port', '0', '--upstream', up.url]);
      const proxy: Proc = await startProcess(`${name} proxy`, node, args, { cpus: undefined, ready: readyWhenPrinted(/listening on/) });
      closers.push(() => proxy.stop());
      const url = /listening on (\S+)/.exec(proxy.output())![1]!;

      const res = await post(`${url}/v1/chat/completions?x=1`, '{"model":"m"}', { authorization: 'Bearer k', 'content-type': 'application/json' });
      expect(res.status).to.equal(201);
      expect(res.headers['x-upstream']).to.equal('yes');
      expect(res.body).to.equal('{"ok":true}');
      expect(seen).to.deep.equal({ method: 'POST', url: '/v1/chat/completions?x=1', body: '{"model":"m"}', auth: 'Bearer k' });
    });
  }

  it('streams client times every ticking-upstream event through the floor proxy and counts each stream done', async () => {
    const [unode, uargs] = nodeArgs('bench/load/ticking-upstream.ts', ['--port', '0', '--interval-ms', '50']);
    const upstream = await startProcess('ticking upstream', unode, uargs, { cpus: undefined, ready: readyWhenPrinted(/listening on/) });
    closers.push(() => upstream.stop());
    const upUrl = /listening on (\S+)/.exec(upstream.output())![1]!;
    const [pnode, pargs] = nodeArgs('bench/floor-proxy.ts', ['--port', '0', '--upstream', upUrl]);
    const proxy = await startProcess('floor proxy', pnode, pargs, { cpus: undefined, ready: readyWhenPrinted(/listening on/) });
    closers.push(() => proxy.stop());
    const url = /listening on (\S+)/.exec(proxy.output())![1]!;
    const spec: StreamsSpec = {
      url: `${url}/v1/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":true,"max_tokens":4}',
      streams: 6,
      rampS: 0.1,
      events: 4,
    };
    const marks: string[] = [];
    const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/streams-client.ts'), [JSON.stringify(spec)]);
    const r = JSON.parse(await runChild(node, args, undefined, 'BENCH_RESULT', 30_000, (line) => marks.push(line))) as StreamsResult;
    expect(r.failures).to.deep.equal({});
    expect(r.done).to.equal(6);
    expect(r.events).to.equal(24);
    expect(r.delayUs.p50).to.be.greaterThan(0).and.lessThan(1_000_000);
    expect(r.allOpenS).to.be.finite;
    expect(marks.some((m) => m.startsWith('BENCH_RESULT'))).to.equal(true);
  });

  it('streams client counts a stream that ends short of its events as failed, with the reason', async () => {
    const up = await listen((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(tickFrame(process.hrtime.bigint()));
    });
    closers.push(() => new Promise((r) => up.server.close(() => r())));
    const spec: StreamsSpec = { url: `${up.url}/s`, headers: {}, body: '{}', streams: 2, rampS: 0, events: 3 };
    const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/streams-client.ts'), [JSON.stringify(spec)]);
    const r = JSON.parse(await runChild(node, args, undefined, 'BENCH_RESULT', 30_000)) as StreamsResult;
    expect(r.errors).to.equal(2);
    expect(r.failures).to.deep.equal({ 'ended after 1 of 3 events': 2 });
  });

  it('Redis counter passes commands through and counts them and the round trips', async () => {
    // A stand-in Redis: answers +OK to whatever arrives, once per write.
    const fake = createNetServer((socket) => socket.on('data', () => socket.write('+OK\r\n')));
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((r) => fake.close(() => r())));
    const counter = await startRedisCounter(`redis://127.0.0.1:${(fake.address() as AddressInfo).port}`);
    closers.push(() => counter.close());
    const socket = connect(Number(new URL(counter.url).port), '127.0.0.1');
    closers.push(async () => void socket.destroy());
    const reply = () => new Promise((resolve) => socket.once('data', resolve));
    socket.write('*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n');
    await reply();
    socket.write('*1\r\n$4\r\nPING\r\n');
    await reply();
    expect(counter.read()).to.deep.equal({ commands: 3, roundTrips: 2, byCommand: { GET: 2, PING: 1 } });
    counter.reset();
    expect(counter.read().commands).to.equal(0);
  });

  it('stream client counts SSE frames even when a frame ends across two writes', async () => {
    const up = await listen((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Three frames; the second's blank line arrives in a separate write.
      res.write('data: 1\n\n');
      res.write('data: 2\n');
      setTimeout(() => {
        res.write('\n');
        res.end('event: x\ndata: 3\n\n');
      }, 5);
    });
    closers.push(() => new Promise((r) => up.server.close(() => r())));
    const r = await runStreams(
      { url: `${up.url}/s`, headers: { 'content-type': 'application/json' }, body: '{}', connections: 2, durationS: 0.3 },
      undefined,
    );
    expect(r.errors).to.equal(0);
    expect(r.streams).to.be.greaterThan(0);
    expect(r.events).to.equal(r.streams * 3);
    expect(r.ttfbUs.p50).to.be.at.most(r.totalUs.p50);
  });

  it('batch client sends every listed request exactly once and tallies the answers', async () => {
    const paths: string[] = [];
    const up = await listen((req, _body, res) => {
      paths.push(req.url!);
      res.writeHead(req.url === '/bad' ? 404 : 200);
      res.end();
    });
    closers.push(() => new Promise((r) => up.server.close(() => r())));
    const dir = mkdtempSync(join(tmpdir(), 'bench-batch-test-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const list = [...Array.from({ length: 20 }, (_, i) => `/ok/${i}`), '/bad'].map((path) => ({ method: 'GET' as const, path, headers: {} }));
    const r = await runBatch(dir, up.url, list, 4, undefined);
    expect(r.requests).to.equal(21);
    expect(r.statuses).to.deep.equal({ '200': 20, '404': 1 });
    expect(r.errors).to.equal(1);
    expect([...paths].sort()).to.deep.equal(list.map((l) => l.path).sort());
  });

  it('settlement child reports every call it settles exactly once, and CPU per call for each round', async () => {
    const ids: string[] = [];
    const cp = await listen((_req, body, res) => {
      const { reports } = JSON.parse(body) as { reports: { request_id: string }[] };
      ids.push(...reports.map((r) => r.request_id));
      const results = reports.map((r) => ({
        request_id: r.request_id,
        recorded: true,
        workspace_id: spec.workspaceId,
        balance_micros: spec.money,
        balance_version: 1,
        key_remaining_micros: spec.money,
        key_version: 1,
      }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
    closers.push(() => new Promise((r) => cp.server.close(() => r())));
    const spec: SettlementSpec = {
      controlPlane: cp.url,
      seconds: 0.2,
      rounds: 2,
      perMs: 4,
      workspaceId: '1c6b7b5f-0000-4000-8000-000000000001',
      keyId: '0b5a6a4e-0000-4000-8000-000000000001',
      money: 1e15,
    };
    const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/scenarios/settlement-child.ts'), [JSON.stringify(spec)]);
    const result = JSON.parse(await runChild(node, args, undefined, 'BENCH_RESULT', 30_000)) as SettlementResult;
    expect(result.rounds).to.have.length(2);
    for (const us of result.rounds) expect(us).to.be.greaterThan(0);
    expect(ids).to.have.length(result.calls);
    expect(new Set(ids).size).to.equal(result.calls);
  });
});
