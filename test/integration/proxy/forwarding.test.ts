import { expect } from 'chai';
import { connect } from 'node:net';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, edgePath, edgeRequest, FORMATS, modelBody, servedAs } from '../../support/edge-calls.js';
import { WIRE } from '../../../proxy/wire/registry.js';

/** Writes raw bytes to the proxy and returns the head (status line and headers) of its answer. */
function rawStatus(url: string, request: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n\r\n')) {
        resolve(data.split('\r\n\r\n')[0]!);
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(data.split('\r\n\r\n')[0] ?? ''));
  });
}

describeEachStore('proxy: what is forwarded and what is not', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const format of FORMATS) {
    it(`${format}: hop-by-hop headers, cookies and the client's credentials stay behind; anthropic-beta passes to a Messages provider only`, async () => {
      const k = await seedKey(dp.cp.deps);
      const a = await edgeCall(dp.proxy.url, format, k.slug, k.secret, modelBody(format), {
        headers: {
          'x-api-key': k.secret,
          authorization: `Bearer ${k.secret}`,
          cookie: 'session=secret',
          'proxy-authorization': 'Basic abc',
          'x-forwarded-for': '10.0.0.1',
          'anthropic-beta': 'tools-2024-04-04',
          'accept-encoding': 'gzip',
        },
      });
      expect(a.status, a.text).to.equal(200);
      const seen = dp.fake.requests.at(-1)!.headers;
      for (const h of ['cookie', 'proxy-authorization', 'x-forwarded-for']) expect(seen[h], h).to.equal(undefined);
      expect(JSON.stringify(seen)).not.to.include(k.secret);
      // Another API's headers mean nothing to the provider: they go only to a provider of that API.
      const ownsBeta = WIRE[servedAs(format)].ownHeaders.includes('anthropic-beta');
      expect(seen['anthropic-beta']).to.equal(ownsBeta ? 'tools-2024-04-04' : undefined);
      expect(seen['accept-encoding']).to.equal('identity');
    });

    it(`${format}: an upstream redirect is relayed, not followed, and not billed`, async () => {
      const k = await seedKey(dp.cp.deps);
      dp.fake.enqueue({ kind: 'error', status: 307, body: { moved: true }, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
      const { url, init } = edgeRequest(dp.proxy.url, format, k.slug, k.secret, modelBody(format));
      const res = await fetch(url, { ...init, redirect: 'manual' });
      expect(res.status).to.equal(307);
      expect(res.headers.get('location')).to.equal('http://127.0.0.1:1/elsewhere');
      await res.text();
      expect(dp.fake.requests).to.have.length(1);
      await dp.proxy.drain();
      expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(0);
    });
  }

  it('400 for a request carrying both Content-Length and Transfer-Encoding, which never reaches the provider', async () => {
    const k = await seedKey(dp.cp.deps);
    const body = JSON.stringify(modelBody('chat'));
    const status = await rawStatus(
      dp.proxy.url,
      `POST ${edgePath('chat', k.slug)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${k.secret}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    expect(status).to.match(/^HTTP\/1\.1 400/);
    expect(status).to.match(/x-request-id: req_/i);
    expect(dp.fake.requests).to.have.length(0);
  });

  it('names the /{workspace_slug}/… base for a path without the slug: 404 in OpenAI’s format, 400 in Anthropic’s (Claude Code hides every 404’s message)', async () => {
    const chat = await fetch(`${dp.proxy.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(chat.status).to.equal(404);
    const chatError = ((await chat.json()) as { error: { type: string; message: string } }).error;
    expect(chatError.type).to.equal('invalid_request_error');
    expect(chatError.message).to.match(/^The path \/v1\/chat\/completions has no workspace slug\. /);
    expect(chatError.message).to.include('/{workspace_slug}/v1/').and.include('http://localhost:8081/{workspace_slug}/v1.');
    for (const [path, headers] of [
      ['/v1/messages', {}],
      ['/v1/models', { 'anthropic-version': '2023-06-01' }],
    ] as const) {
      const messages = await fetch(`${dp.proxy.url}${path}`, { method: 'POST', body: '{}', headers });
      expect(messages.status).to.equal(400);
      const body = (await messages.json()) as { type: string; error: { type: string; message: string } };
      expect([body.type, body.error.type]).to.deep.equal(['error', 'invalid_request_error']);
      expect(body.error.message).to.match(/has no workspace slug\. /);
      expect(body.error.message).to.include('/{workspace_slug}/anthropic/v1/').and.include('http://localhost:8081/{workspace_slug}/anthropic.');
    }
  });

  it('answers Claude Code’s probes of {base}/api/hello (HEAD and GET) 200 without a key; other methods stay unrouted', async () => {
    for (const method of ['HEAD', 'GET']) {
      const hello = await fetch(`${dp.proxy.url}/acme/anthropic/api/hello`, { method });
      expect(hello.status, method).to.equal(200);
    }
    const post = await fetch(`${dp.proxy.url}/acme/anthropic/api/hello`, { method: 'POST' });
    expect(post.status).to.equal(404);
    expect(dp.fake.requests).to.have.length(0);
  });

  it('404 in the format of the path for unknown routes, 405 for the wrong method', async () => {
    const unknown = await fetch(`${dp.proxy.url}/acme/v1/audio/speech`, { method: 'POST' });
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
    const wrong = await fetch(`${dp.proxy.url}/acme/anthropic/v1/messages`);
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('POST');
    expect(((await wrong.json()) as { type: string }).type).to.equal('error');
  });
});
