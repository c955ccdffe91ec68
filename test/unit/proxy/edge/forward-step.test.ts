import { expect } from 'chai';
import { plainUsage } from '../../../../proxy/call.js';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { forwardCall } from '../../../../proxy/edge/steps/forward.js';
import type { CallState, EdgeDeps, Held } from '../../../../proxy/edge/steps/step.js';
import { fakeHeld, fakeDeps, plannedState } from './fakes.js';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function get(url: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { method: 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    })
      .on('error', reject)
      .end();
  });
}

describe("edge step forward: the provider's request sent, its answer relayed", () => {
  const servers: Server[] = [];
  const pools: Pool[] = [];
  let upstreamSaw: IncomingHttpHeaders[] = [];
  let upstream = '';

  before(async () => {
    const provider = createServer((req, res) => {
      upstreamSaw.push(req.headers);
      req.resume();
      req.on('end', () => {
        const status = req.url?.includes('fail') ? 529 : 200;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', choices: [], usage: { prompt_tokens: 7, completion_tokens: 9 } }));
      });
    });
    servers.push(provider);
    upstream = await listen(provider);
  });

  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
    for (const s of servers) s.close();
  });

  /** Runs the step inside a real client-facing server, so it relays to a real response. */
  async function through(path: string) {
    upstreamSaw = [];
    const { deps } = fakeDeps();
    const traced: string[][] = [];
    let state: CallState | undefined;
    const withPool: EdgeDeps = {
      ...deps,
      pool: (origin) => {
        const pool = new Pool(origin);
        pools.push(pool);
        return pool;
      },
      observe: { ...deps.observe, upstream: (_call, headers) => void (traced.push([...headers]), headers.push('traceparent', '00-abc-def-01')) },
    };
    const edge = createServer((req, res) => {
      const planned = plannedState(withPool, { body: { model: 'tg/gpt-direct', messages: [] } });
      const s: Held = {
        ...planned,
        req,
        res,
        up: { ...planned.up, origin: upstream, path },
        held: fakeHeld(),
        limitHeaders: { 'x-request-id': 'req-1' },
      };
      state = s;
      void forwardCall(s, withPool);
    });
    servers.push(edge);
    const answer = await get(await listen(edge));
    return { answer, state: state!, traced };
  }

  it("writes the outcome (complete, with the provider's usage) and relays the answer with the call's extra headers", async () => {
    const { answer, state } = await through('/v1/chat/completions');
    expect(answer.status).to.equal(200);
    expect(answer.headers['x-request-id']).to.equal('req-1');
    expect(state.outcome?.kind).to.equal('complete');
    expect(state.outcome?.kind === 'complete' && state.outcome.tap.usage()).to.deep.equal(plainUsage(7, 9));
  });

  it('the observer puts its trace context on the provider request, and the provider gets it', async () => {
    const { traced } = await through('/v1/chat/completions');
    expect(traced).to.have.length(1);
    expect(upstreamSaw[0]!.traceparent).to.equal('00-abc-def-01');
  });

  it("writes the provider's own error as an upstream-error outcome and relays its status", async () => {
    const { answer, state } = await through('/fail');
    expect(answer.status).to.equal(529);
    expect(state.outcome).to.deep.equal({ kind: 'upstream-error', status: 529 });
  });
});
