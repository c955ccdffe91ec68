import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createGuardedDispatcher, isPrivateAddress, urlRefusal } from '../../../control-plane/services/outbound/guard.js';

describe('outbound guard', () => {
  it('isPrivateAddress: loopback, private, link-local, unique-local, unspecified and mapped forms; public addresses pass', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '[::1]',
    ]) {
      expect(isPrivateAddress(a), a).to.equal(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', 'example.com']) expect(isPrivateAddress(a), a).to.equal(false);
  });

  it('urlRefusal: https only, no credentials, no private literal or localhost, unless private targets are allowed', () => {
    const off = { allowPrivate: false };
    expect(urlRefusal('https://idp.example.com/realms/x', off)).to.equal(undefined);
    expect(urlRefusal('http://idp.example.com', off)).to.match(/https/);
    expect(urlRefusal('https://u:p@idp.example.com', off)).to.match(/credentials/);
    expect(urlRefusal('https://127.0.0.1', off)).to.match(/loopback/);
    expect(urlRefusal('https://localhost', off)).to.match(/loopback/);
    expect(urlRefusal('http://127.0.0.1:8080', { allowPrivate: true })).to.equal(undefined);
  });

  it('the dispatcher checks every address a name resolves to at connect time: localhost never reaches the listener, nor the service’s own ports when private targets are allowed', async () => {
    let hits = 0;
    const server = createServer((_req, res) => (hits++, res.end('ok')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const guarded = createGuardedDispatcher({ allowPrivate: false });
    try {
      for (const url of [`http://localhost:${port}/`, `http://127.0.0.1:${port}/`]) {
        const err = await request(url, { dispatcher: guarded }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(String(err), url).to.match(/loopback, private or link-local/);
      }
      expect(hits).to.equal(0);
      const ownPort = createGuardedDispatcher({ allowPrivate: true, ownPorts: [port] });
      for (const url of [`http://localhost:${port}/`, `http://127.0.0.1:${port}/`]) {
        const err = await request(url, { dispatcher: ownPort }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(String(err), url).to.match(/one of this service's own ports/);
      }
      await ownPort.close();
      expect(hits).to.equal(0);
      const open = createGuardedDispatcher({ allowPrivate: true });
      expect((await request(`http://127.0.0.1:${port}/`, { dispatcher: open })).statusCode).to.equal(200);
      await open.close();
      expect(hits).to.equal(1);
    } finally {
      await guarded.close();
      await new Promise((r) => server.close(r));
    }
  });
});
