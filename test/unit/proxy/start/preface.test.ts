import { expect } from 'chai';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { sniffPreface } from '../../../../proxy/start/preface.js';

const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

interface Handed {
  socket: Socket;
  h2: boolean;
  /** Everything the new owner reads, from the first byte. */
  bytes: Promise<string>;
}

/** A loopback server that sniffs each connection and records where it went; nothing is read before the hand-off. */
async function sniffing(
  timeoutMs = 5_000,
): Promise<{ server: Server; port: number; handed: Handed[]; next(): Promise<Handed>; dropped: Promise<void> }> {
  const handed: Handed[] = [];
  let wake: ((h: Handed) => void) | undefined;
  let droppedResolve!: () => void;
  const dropped = new Promise<void>((resolve) => (droppedResolve = resolve));
  const server = createServer((socket) => {
    socket.once('close', () => {
      if (!handed.some((h) => h.socket === socket)) droppedResolve();
    });
    sniffPreface(socket, timeoutMs, (s, h2) => {
      const bytes = new Promise<string>((resolve) => {
        let text = '';
        s.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (text.endsWith('END')) resolve(text);
        });
      });
      // An HTTP/2 owner reads what is buffered itself; this one reads by flowing, as Node's HTTP/1.1 parser does.
      if (h2) s.resume();
      const h = { socket: s, h2, bytes };
      handed.push(h);
      wake?.(h);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const next = () => new Promise<Handed>((resolve) => (wake = resolve));
  return { server, port, handed, next, dropped };
}

async function send(port: number, ...parts: string[]): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  for (const part of parts) {
    socket.write(part);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return socket;
}

describe('proxy start: telling HTTP/2 from HTTP/1.1 by the first bytes', () => {
  let s: Awaited<ReturnType<typeof sniffing>>;
  afterEach(() => s.server.close());

  it('hands an HTTP/1.1 request on as HTTP/1.1 with every byte it sent, first ones included', async () => {
    s = await sniffing();
    const handed = s.next();
    const client = await send(s.port, 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\nEND');
    const h = await handed;
    expect(h.h2).to.equal(false);
    expect(await h.bytes).to.equal('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\nEND');
    client.destroy();
  });

  it('takes methods that start with P (POST, PUT, PATCH) for HTTP/1.1 at their second byte', async () => {
    s = await sniffing();
    for (const method of ['POST', 'PUT', 'PATCH', 'P']) {
      const handed = s.next();
      const client = await send(
        s.port,
        method === 'P' ? 'P' : `${method} /x HTTP/1.1\r\n\r\n`,
        method === 'P' ? 'OST /y HTTP/1.1\r\n\r\nEND' : 'END',
      );
      const h = await handed;
      expect(h.h2, method).to.equal(false);
      expect(await h.bytes, method).to.match(method === 'P' ? /^POST \/y/ : new RegExp(`^${method} /x`));
      client.destroy();
    }
  });

  it('waits for a preface that arrives in pieces, then hands it on as HTTP/2, whole', async () => {
    s = await sniffing();
    const handed = s.next();
    const client = await send(s.port, PREFACE.slice(0, 3), PREFACE.slice(3, 17), `${PREFACE.slice(17)}frames END`);
    const h = await handed;
    expect(h.h2).to.equal(true);
    expect(await h.bytes).to.equal(`${PREFACE}frames END`);
    client.destroy();
  });

  it('closes a connection that sends nothing within the timeout, and one that resets, without handing either on', async () => {
    s = await sniffing(150);
    const silent = await send(s.port);
    const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
    await closed;
    await s.dropped;
    const resetting = await send(s.port, 'PRI');
    resetting.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.handed).to.have.length(0);
  });
});
