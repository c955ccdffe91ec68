import { expect } from 'chai';
import { constants, type ClientHttp2Session } from 'node:http2';
import type { RunningProxy } from '../../../proxy/runtime.js';
import { moneyOf, seedAnotherKey, seedKey, startDataPlane, startTestProxy, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { edgeCall, edgePath, modelBody, sseData } from '../../support/edge-calls.js';
import { http2Call, keyHeaders, openHttp2 } from '../../support/http2-calls.js';
import { describeEachStore } from '../../support/stores.js';

/** The key's usage rows, oldest first: amount, input, output tokens. */
async function usageRows(dp: DataPlane, keyId: string): Promise<[string, number, number][]> {
  await dp.proxy.drain();
  const rows = await dp.cp.deps.db.query<{ r: [string, number, number] }>(
    `SELECT json_build_array(abs(amount_usd)::text, input_tokens, output_tokens) AS r
       FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at`,
    [keyId],
  );
  return rows.map((x) => x.r);
}

/**
 * Cleartext HTTP/2 (h2c, prior knowledge) on the proxy's one port beside
 * HTTP/1.1: the same calls, answers and bills; a refused body ends its own
 * stream, not the connection; a client that leaves mid-stream is billed as
 * over HTTP/1.1; and with PROXY_HTTP2_CLEARTEXT off the port speaks
 * HTTP/1.1 alone.
 */
describeEachStore('proxy: HTTP/2 at the edge', (store) => {
  let dp: DataPlane;
  let base: SeededKey;
  let session: ClientHttp2Session;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);

  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_MAX_BODY_BYTES: '65536' } });
    base = await seedKey(dp.cp.deps, { models: ['tg/sonnet'] });
    session = await openHttp2(dp.proxy.url);
    process.on('warning', onWarning);
  });
  after(async () => {
    process.off('warning', onWarning);
    session?.close();
    await dp?.close();
  });

  for (const [format, stream] of [
    ['chat', false],
    ['messages', true],
  ] as const) {
    it(`answers a ${format} call${stream ? ', streamed,' : ''} over HTTP/2 as over HTTP/1.1 and bills it the same`, async () => {
      const [h1Key, h2Key] = [await seedAnotherKey(dp.cp.deps, base), await seedAnotherKey(dp.cp.deps, base)];
      const body = modelBody(format, { stream });
      dp.fake.enqueue({ kind: 'ok', outputTokens: 9, tools: 'none' }, { kind: 'ok', outputTokens: 9, tools: 'none' });
      const h1 = await edgeCall(dp.proxy.url, format, h1Key.slug, h1Key.secret, body);
      const h2 = await http2Call(session, edgePath(format, h2Key.slug), keyHeaders(format, h2Key.secret), JSON.stringify(body));
      expect(h2.status).to.equal(200);
      expect(h2.headers['x-request-id']).to.be.a('string');
      expect(h2.headers).not.to.have.property('connection');
      const text = (answer: string) =>
        stream
          ? sseData(answer)
              .map((e) => (e.delta as { text?: string } | undefined)?.text ?? '')
              .join('')
          : (JSON.parse(answer) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      expect(text(h2.text)).to.equal(text(h1.text)).and.not.equal('');
      const [h1Rows, h2Rows] = [await usageRows(dp, h1Key.keyId), await usageRows(dp, h2Key.keyId)];
      expect(h2Rows).to.have.length(1);
      expect(h2Rows).to.deep.equal(h1Rows);
    });
  }

  it('answers the health probe over HTTP/2, GET and HEAD', async () => {
    const get = await http2Call(session, '/healthz', {});
    expect([get.status, get.text]).to.deep.equal([200, '{"status":"ok"}']);
    const head = await http2Call(session, '/healthz', { ':method': 'HEAD' });
    expect([head.status, head.text]).to.deep.equal([200, '']);
  });

  it('serves several calls at once on one HTTP/2 connection', async () => {
    const k = await seedAnotherKey(dp.cp.deps, base);
    dp.fake.enqueue(...Array.from({ length: 4 }, () => ({ kind: 'ok' as const, outputTokens: 5, eventDelayMs: 20, tools: 'none' as const })));
    const body = JSON.stringify(modelBody('chat', { stream: true }));
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => http2Call(session, edgePath('chat', k.slug), keyHeaders('chat', k.secret), body)),
    );
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
    for (const a of answers) expect(a.text).to.include('data: [DONE]');
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(4);
  });

  it('answers a body over the limit 413, and a bad key 401, on an HTTP/2 connection that then serves the next call; no connection header is attempted', async () => {
    const k = await seedAnotherKey(dp.cp.deps, base);
    const big = JSON.stringify(modelBody('chat', { messages: [{ role: 'user', content: 'x'.repeat(200_000) }] }));
    const refused = await http2Call(session, edgePath('chat', k.slug), keyHeaders('chat', k.secret), big);
    expect(refused.status).to.equal(413);
    expect(refused.headers).not.to.have.property('connection');
    const badKey = await http2Call(session, edgePath('chat', k.slug), keyHeaders('chat', 'tg_not_a_key'), big);
    expect(badKey.status).to.equal(401);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 3, tools: 'none' });
    const next = await http2Call(session, edgePath('chat', k.slug), keyHeaders('chat', k.secret), JSON.stringify(modelBody('chat')));
    expect(next.status).to.equal(200);
    expect(session.closed).to.equal(false);
    expect(warnings.filter((w) => w.includes('connection header'))).to.deep.equal([]);
  });

  it('cuts only the stream of a client that keeps sending a refused body past the bound, and the connection serves the next call', async () => {
    const k = await seedAnotherKey(dp.cp.deps, base);
    // Past max(PROXY_MAX_BODY_BYTES, 1 MiB) of discarded body the stream is cancelled.
    const huge = JSON.stringify(modelBody('chat', { messages: [{ role: 'user', content: 'x'.repeat(3 * 1024 * 1024) }] }));
    const stream = session.request({ ':method': 'POST', ':path': edgePath('chat', k.slug), ...keyHeaders('chat', k.secret) });
    const status = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
    const closed = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1)));
    stream.on('error', () => {});
    stream.resume();
    stream.end(huge);
    expect(await status).to.equal(413);
    expect(await closed).to.equal(constants.NGHTTP2_CANCEL);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 3, tools: 'none' });
    const next = await http2Call(session, edgePath('chat', k.slug), keyHeaders('chat', k.secret), JSON.stringify(modelBody('chat')));
    expect(next.status).to.equal(200);
  });

  it('bills a stream whose HTTP/2 client cancels it mid-answer, as when an HTTP/1.1 client leaves', async () => {
    const k = await seedAnotherKey(dp.cp.deps, base);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 20, eventDelayMs: 30, tools: 'none' });
    const cut = await http2Call(
      session,
      edgePath('chat', k.slug),
      keyHeaders('chat', k.secret),
      JSON.stringify(modelBody('chat', { stream: true })),
      (s) => s.once('data', () => s.close(constants.NGHTTP2_CANCEL)),
    ).then(
      () => 'ended',
      () => 'cancelled',
    );
    expect(cut).to.be.oneOf(['ended', 'cancelled']);
    // The provider's answer is read on without the client and billed what it reports.
    let rows: [string, number, number][] = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      rows = await usageRows(dp, k.keyId);
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows).to.have.length(1);
    expect(rows[0]![2]).to.equal(20);
    expect(session.closed).to.equal(false);
  });

  it('with PROXY_HTTP2_CLEARTEXT=false speaks HTTP/1.1 alone: an HTTP/2 client is refused, HTTP/1.1 is served', async () => {
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startTestProxy(dp.cp, dp.fake, { PROXY_HTTP2_CLEARTEXT: 'false' });
      const k = await seedAnotherKey(dp.cp.deps, base);
      const h2 = await openHttp2(proxy.url)
        .then((s) =>
          http2Call(s, edgePath('chat', k.slug), keyHeaders('chat', k.secret), JSON.stringify(modelBody('chat'))).finally(() => s.destroy()),
        )
        .then(
          () => 'answered',
          () => 'refused',
        );
      expect(h2).to.equal('refused');
      dp.fake.enqueue({ kind: 'ok', outputTokens: 3, tools: 'none' });
      expect((await edgeCall(proxy.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(200);
    } finally {
      await proxy?.close();
    }
  });
});
