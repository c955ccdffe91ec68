import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, startTestProxy } from '../../support/data-plane.js';
import { edgePath, modelBody } from '../../support/edge-calls.js';
import { createFrame, isSocket, openResponsesSocket } from '../../support/responses-socket.js';
import { http2Call, keyHeaders, openHttp2 } from '../../support/http2-calls.js';

describeEachStore('proxy: graceful shutdown', (store) => {
  let cp: TestControlPlane;
  let fake: FakeUpstream;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    fake = await startFakeUpstream();
  });
  after(async () => {
    await fake.close();
    await cp.close();
  });

  it('a stream in flight when the proxy is told to stop runs to its end and is billed; new connections are refused', async () => {
    const proxy = await startTestProxy(cp, fake);
    const k = await seedKey(cp.deps);
    fake.enqueue({ kind: 'ok', outputTokens: 8, eventDelayMs: 50 });
    const res = await fetch(`${proxy.url}${edgePath('chat', k.slug)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(modelBody('chat', { stream: true })),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const closing = proxy.close();
    let text = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
    expect(text).to.include('data: [DONE]');
    await closing;
    expect(
      await fetch(`${proxy.url}/healthz`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).to.equal('refused');
    const m = await moneyOf(cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.greaterThan(0);
  });

  it('shutdown closes an idle socket with 1001 at once, and a busy one with 1001 once its answer is out and billed', async () => {
    const proxy = await startTestProxy(cp, fake);
    const k = await seedKey(cp.deps, { models: ['tg/gpt-direct'] });
    const idle = await openResponsesSocket(proxy.url, k.slug, k.secret);
    const busy = await openResponsesSocket(proxy.url, k.slug, k.secret);
    if (!isSocket(idle) || !isSocket(busy)) throw new Error('upgrade refused');
    fake.enqueue({ kind: 'ok', outputTokens: 8, eventDelayMs: 50, textOnly: true });
    const frames: string[] = [];
    busy.ws.on('message', (d: Buffer) => frames.push(String((JSON.parse(d.toString()) as { type: string }).type)));
    busy.ws.send(JSON.stringify(createFrame('tg/gpt-direct')));
    await new Promise<void>((resolve) => busy.ws.once('message', () => resolve()));
    const closing = proxy.close();
    expect((await idle.closed).code).to.equal(1001);
    expect((await busy.closed).code).to.equal(1001);
    expect(frames.at(-1)).to.equal('response.completed');
    await closing;
    const m = await moneyOf(cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.greaterThan(0);
  });

  it('an HTTP/2 stream in flight runs to its end and is billed; its session and an idle one are told to go away and close', async () => {
    const proxy = await startTestProxy(cp, fake);
    const k = await seedKey(cp.deps);
    const busy = await openHttp2(proxy.url);
    const idle = await openHttp2(proxy.url);
    const goneAway = (s: typeof busy) => new Promise<void>((resolve) => s.once('goaway', () => resolve()));
    const closed = (s: typeof busy) => new Promise<void>((resolve) => s.once('close', () => resolve()));
    const [busyGoaway, idleGoaway, busyClosed, idleClosed] = [goneAway(busy), goneAway(idle), closed(busy), closed(idle)];
    fake.enqueue({ kind: 'ok', outputTokens: 8, eventDelayMs: 50 });
    let closing: Promise<void> | undefined;
    const answer = await http2Call(
      busy,
      edgePath('chat', k.slug),
      keyHeaders('chat', k.secret),
      JSON.stringify(modelBody('chat', { stream: true })),
      (s) => s.once('data', () => (closing = proxy.close())),
    );
    expect(answer.text).to.include('data: [DONE]');
    await Promise.all([busyGoaway, idleGoaway, busyClosed, idleClosed]);
    await closing;
    const m = await moneyOf(cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.greaterThan(0);
  });
});
