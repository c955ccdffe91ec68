import { expect } from 'chai';
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveCleartextHttp2, type CleartextHttp2 } from '../../../../proxy/start/http2-cleartext.js';
import { http2Call, openHttp2 } from '../../../support/http2-calls.js';

/** An HTTP/1.1 server with HTTP/2 beside it; its handler answers with the protocol a request came over, after the `delay` (ms) its query names. */
async function bothProtocols(idleMs: number): Promise<{ server: Server; h2c: CleartextHttp2; url: string }> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const delay = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('delay') ?? 0);
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end(`HTTP/${req.httpVersion}`), delay);
  };
  const server = createServer({ keepAliveTimeout: 5_000 }, handle);
  const h2c = serveCleartextHttp2(server, handle, idleMs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, h2c, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** An HTTP/1.1 GET: the answer, and whether it went on a connection an earlier request opened. */
function http1Get(url: string, agent: Agent): Promise<[string, boolean]> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve([text, req.reusedSocket]));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('proxy start: cleartext HTTP/2 beside HTTP/1.1 on one port', () => {
  let s: Awaited<ReturnType<typeof bothProtocols>>;
  afterEach(async () => {
    s.h2c.closeAll();
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  });

  it('serves HTTP/1.1, its keep-alive included, and HTTP/2 with the same handler', async () => {
    s = await bothProtocols(5_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await http1Get(`${s.url}/a`, agent);
    const second = await http1Get(`${s.url}/b`, agent);
    agent.destroy();
    expect([first, second]).to.deep.equal([
      ['HTTP/1.1', false],
      ['HTTP/1.1', true],
    ]);
    const session = await openHttp2(s.url);
    const answers = await Promise.all([http2Call(session, '/c', {}), http2Call(session, '/d', {})]);
    expect(answers.map((a) => [a.status, a.text])).to.deep.equal([
      [200, 'HTTP/2.0'],
      [200, 'HTTP/2.0'],
    ]);
    session.close();
  });

  it('closes an HTTP/2 connection without a call for the idle time, and not while a call is open', async () => {
    s = await bothProtocols(150);
    const session = await openHttp2(s.url);
    const closed = new Promise<number>((resolve) => session.once('close', () => resolve(Date.now())));
    const answer = await http2Call(session, '/slow?delay=400', {});
    const answeredAt = Date.now();
    expect(answer.text).to.equal('HTTP/2.0');
    expect(session.closed).to.equal(false);
    const closedAt = await closed;
    expect(closedAt - answeredAt).to.be.within(100, 1_000);
  });

  it('on drain tells each HTTP/2 connection to go away: a call in flight finishes, no new one starts', async () => {
    s = await bothProtocols(5_000);
    const session = await openHttp2(s.url);
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    const inFlight = http2Call(session, '/slow?delay=200', {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    s.h2c.drain();
    await goaway;
    expect((await inFlight).text).to.equal('HTTP/2.0');
    const late = await http2Call(session, '/late', {}).then(
      () => 'answered',
      () => 'refused',
    );
    expect(late).to.equal('refused');
  });
});
