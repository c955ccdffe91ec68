import { expect } from 'chai';
import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachStore } from '../../support/stores.js';
import { seedAnotherKey, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, edgePath, ERROR_TYPES, errorType, FORMATS, keyHeaders, modelBody, otherKeyHeader } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { startProxy } from '../../../proxy/runtime.js';
import { testConfig } from '../../support/control-plane.js';

const LIMIT = 64 * 1024;

/** Sends raw bytes and reads whatever comes back until the proxy closes. */
function raw(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString('utf8')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

/** A body sent in pieces, as a client uploading a large file does; resolves with the answer it reads, or its error. */
function upload(
  url: string,
  format: WireFormat,
  k: SeededKey,
  bytes: number,
  declare: boolean,
): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = keyHeaders(format, k.secret);
    if (declare) headers['content-length'] = bytes;
    const req = request(`${url}${edgePath(format, k.slug)}`, { method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    const chunk = Buffer.alloc(16 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent);
        sent += n;
        if (!req.write(chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describeEachStore('proxy: edge input hardening', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_MAX_BODY_BYTES: String(LIMIT) } });
    k = await seedKey(dp.cp.deps);
  });
  after(() => dp.close());

  for (const format of FORMATS) {
    it(`JSON nested 10,000 deep is a 400 in the ${format} shape, never forwarded`, async () => {
      dp.fake.reset();
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const body = `{"model":"tg/sonnet","max_tokens":16,"messages":[{"role":"user","content":${deep}}]}`;
      const a = await edgeCall(dp.proxy.url, format, k.slug, k.secret, body);
      expect(a.status, a.text).to.equal(400);
      expect(errorType(format, a)).to.equal(ERROR_TYPES[400][format]);
      expect(dp.fake.requests).to.have.length(0);
    });
  }

  it('JSON nested within the limit, brackets inside strings included, is forwarded', async () => {
    const nested = JSON.parse(`${'['.repeat(100)}"${'['.repeat(500)}"${']'.repeat(100)}`) as unknown;
    const a = await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, modelBody('chat', { metadata_tree: nested }));
    expect(a.status, a.text).to.equal(200);
  });

  it('two different keys (the format’s own header and another) or two Authorization headers are a 401; the same key twice is fine', async () => {
    const other = await seedAnotherKey(dp.cp.deps, k);
    /** The format's own key header carries k; another header it takes carries `second`. */
    const alsoIn = (format: WireFormat, second: string) => {
      const header = otherKeyHeader(format);
      return { [header]: header === 'authorization' ? `Bearer ${second}` : second };
    };
    for (const format of FORMATS) {
      const mixed = await edgeCall(dp.proxy.url, format, k.slug, k.secret, modelBody(format), { headers: alsoIn(format, other.secret) });
      expect(mixed.status, mixed.text).to.equal(401);
      const same = await edgeCall(dp.proxy.url, format, k.slug, k.secret, modelBody(format), { headers: alsoIn(format, k.secret) });
      expect(same.status, same.text).to.equal(200);
    }
    const payload = JSON.stringify(modelBody('chat'));
    const twice = await raw(
      dp.proxy.url,
      `POST ${edgePath('chat', k.slug)} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${k.secret}\r\nauthorization: Bearer ${other.secret}\r\n` +
        `content-type: application/json\r\ncontent-length: ${payload.length}\r\nconnection: close\r\n\r\n${payload}`,
    );
    expect(twice.split('\r\n')[0]).to.equal('HTTP/1.1 401 Unauthorized');
  });

  for (const declare of [true, false]) {
    it(`a body over the limit (${declare ? 'declared' : 'chunked'}) gets a 413 the client can read, not a broken pipe`, async () => {
      for (const format of FORMATS) {
        const a = await upload(dp.proxy.url, format, k, LIMIT * 4, declare);
        expect(a.error, JSON.stringify(a)).to.equal(undefined);
        expect(a.status).to.equal(413);
        expect(errorType(format, { body: JSON.parse(a.body!) as unknown })).to.equal(ERROR_TYPES[413][format]);
      }
    });
  }

  it("requests Node's parser refuses are answered in the format of their path", async () => {
    const bigHeader = `x-filler: ${'a'.repeat(20 * 1024)}\r\n`;
    const overflow = await raw(dp.proxy.url, `POST /${k.slug}/anthropic/v1/messages HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`);
    expect(overflow.split('\r\n')[0]).to.equal('HTTP/1.1 431 Request Header Fields Too Large');
    expect(bodyOf(overflow)).to.deep.include({ type: 'error' });
    const badChunk = await raw(
      dp.proxy.url,
      `POST /${k.slug}/anthropic/v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`,
    );
    expect(badChunk.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect((bodyOf(badChunk) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
    expect(bodyOf(badChunk)).to.deep.include({ type: 'error' });
    const chatOverflow = await raw(dp.proxy.url, `POST /${k.slug}/v1/chat/completions HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`);
    expect((bodyOf(chatOverflow) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
    expect(bodyOf(chatOverflow)).to.not.have.property('type');
  });

  it('a client that leaves halfway through its body is logged at info, not as an error', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-proxy-'));
    const config = testConfig({ PROXY_DATA_DIR: dataDir });
    config.dataPlaneToken = dp.cp.deps.config.dataPlaneToken;
    const proxy = await startProxy(config, pino({ level: 'info' }, sink), {
      port: 0,
      host: '127.0.0.1',
      controlPlaneUrl: dp.cp.url,
      changePush: false,
    });
    try {
      const { port } = new URL(proxy.url);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            `POST ${edgePath('chat', k.slug)} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${k.secret}\r\ncontent-length: 1000\r\n\r\n{"model":`,
          );
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on('close', () => resolve());
      });
      const deadline = Date.now() + 5_000;
      while (!lines.some((l) => l.msg.includes('client left')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(lines.filter((l) => l.msg.includes('client left')).map((l) => l.level)).to.deep.equal([30]);
      expect(lines.filter((l) => l.level >= 50)).to.deep.equal([]);
    } finally {
      await proxy.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
