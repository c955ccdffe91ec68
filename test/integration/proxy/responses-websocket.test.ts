import { expect } from 'chai';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachStore } from '../../support/stores.js';
import {
  moneyOf,
  revokeKey,
  seedAnotherKey,
  seedKey,
  startDataPlane,
  startTestProxy,
  type DataPlane,
  type SeededKey,
} from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { createFrame, isSocket, openResponsesSocket, type ResponsesSocket } from '../../support/responses-socket.js';
import { PROVIDER_KINDS } from '../../e2e/responses/kinds.js';

async function socket(proxyUrl: string, k: SeededKey): Promise<ResponsesSocket> {
  const s = await openResponsesSocket(proxyUrl, k.slug, k.secret);
  if (!isSocket(s)) throw new Error(`upgrade refused: ${s.status} ${s.body}`);
  return s;
}

const textOf = (frames: Record<string, unknown>[]): string =>
  frames.map((f) => (f.type === 'response.output_text.delta' ? String(f.delta) : '')).join('');

describeEachStore("proxy: Codex's Responses WebSocket", (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  it('an upgrade without a valid key is answered 401 in the OpenAI error shape, and no socket is opened', async () => {
    for (const key of [undefined, 'not-a-key', `${k.secret.slice(0, -4)}AAAA`]) {
      const s = await openResponsesSocket(dp.proxy.url, k.slug, key);
      expect(isSocket(s), String(key)).to.equal(false);
      if (isSocket(s)) continue;
      expect(s.status).to.equal(401);
      const body = JSON.parse(s.body) as { error: { type: string; code: string } };
      expect(body.error).to.include({ type: 'invalid_request_error', code: 'invalid_api_key' });
    }
    const other = await openResponsesSocket(dp.proxy.url, 'another-workspace', k.secret);
    expect(isSocket(other) ? 101 : other.status).to.equal(401);
  });

  for (const { kind, model, path } of PROVIDER_KINDS) {
    it(`${kind}: each response.create frame is a call, its events come back as frames, the next frame continues from previous_response_id`, async () => {
      const s = await socket(dp.proxy.url, k);
      dp.fake.enqueue({ kind: 'ok', outputTokens: 3, textOnly: true });
      const first = await s.turn(createFrame(model, 'first question', { store: false }));
      expect(first[0]!.type).to.equal('response.created');
      expect(first.at(-1)!.type).to.equal('response.completed');
      expect(textOf(first)).to.equal('tok1 tok2 tok3');
      const id = (first.at(-1)!.response as { id: string }).id;
      // Codex sends only what is new after the response it names; the provider must get the whole conversation.
      dp.fake.enqueue({ kind: 'ok', outputTokens: 2, textOnly: true });
      const second = await s.turn(createFrame(model, 'second question', { store: false, previous_response_id: id }));
      expect(second.at(-1)!.type).to.equal('response.completed');
      expect(dp.fake.requests).to.have.length(2);
      expect(dp.fake.requests.every((r) => r.path === path)).to.equal(true);
      const sent = JSON.stringify(dp.fake.requests[1]!.body);
      expect(sent).to.include('first question').and.include('tok1 tok2 tok3').and.include('second question');
      expect(sent).to.not.include(id);
      s.ws.close();
    });
  }

  it('a prewarm (generate: false) is answered on the socket without a provider call or a bill', async () => {
    const s = await socket(dp.proxy.url, k);
    await dp.proxy.drain();
    const before = await moneyOf(dp.cp.deps, k);
    const frames = await s.turn(createFrame('tg/gpt-direct', 'instructions', { generate: false }));
    expect(frames.map((f) => f.type)).to.deep.equal(['response.created', 'response.completed']);
    expect(dp.fake.requests).to.have.length(0);
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(before.entries);
    s.ws.close();
  });

  it('enforcement per frame: a frame for a model the key may not call is refused as an error frame, the next allowed frame on the same socket works', async () => {
    const narrow = await seedAnotherKey(dp.cp.deps, k);
    const s = await socket(dp.proxy.url, narrow);
    const refused = await s.turn(createFrame('tg/sonnet'));
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include({ type: 'error', status: 403 });
    expect((refused[0]!.error as { type: string }).type).to.equal('permission_error');
    const unknown = await s.turn(createFrame('tg/no-such-model'));
    expect(unknown[0]).to.include({ type: 'error', status: 404 });
    const notJson = await new Promise<Record<string, unknown>>((resolve) => {
      s.ws.once('message', (d: Buffer) => resolve(JSON.parse(d.toString()) as Record<string, unknown>));
      s.ws.send('{not json');
    });
    expect(notJson).to.include({ type: 'error', status: 400 });
    dp.fake.enqueue({ kind: 'ok', outputTokens: 3, textOnly: true });
    const ok = await s.turn(createFrame('tg/gpt-direct'));
    expect(ok.at(-1)!.type).to.equal('response.completed');
    expect(dp.fake.requests).to.have.length(1);
    s.ws.close();
  });

  it('a frame is billed exactly as the same call over HTTP', async () => {
    const overSocket = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'] });
    const overHttp = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'] });
    const s = await socket(dp.proxy.url, overSocket);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 7, textOnly: true });
    await s.turn({ type: 'response.create', ...modelBody('responses', { model: 'tg/gpt-direct' }) });
    dp.fake.enqueue({ kind: 'ok', outputTokens: 7, textOnly: true });
    const http = await edgeCall(
      dp.proxy.url,
      'responses',
      overHttp.slug,
      overHttp.secret,
      modelBody('responses', { model: 'tg/gpt-direct', stream: true }),
    );
    expect(http.status).to.equal(200);
    await dp.proxy.drain();
    const a = await moneyOf(dp.cp.deps, overSocket);
    const b = await moneyOf(dp.cp.deps, overHttp);
    expect(a.entries).to.equal(1);
    expect(a.spend).to.be.greaterThan(0);
    expect(a.spend).to.equal(b.spend);
    s.ws.close();
  });

  it("a slow reader holds the provider's answer back, not the proxy's memory; once it reads, the whole answer comes and is billed", async function () {
    this.timeout(60_000);
    const reader = await seedKey(dp.cp.deps, { models: ['tg/sonnet'] });
    const s = await socket(dp.proxy.url, reader);
    // The client stops reading its socket: what the proxy cannot send must stop the provider's stream, not pile up.
    const raw = (s.ws as unknown as { _socket: Socket })._socket;
    raw.pause();
    dp.fake.enqueue({ kind: 'ok', outputTokens: 64_000, textOnly: true });
    const answered = s.turn(createFrame('tg/sonnet', 'a long answer', { max_output_tokens: 64_000 }));
    await dp.fake.waitForRequests(1);
    // Relayed without back-pressure, this answer (about 10 MB of events) is over at the provider within about
    // 3 s on a loaded 2-core machine, unread or not; held back, it waits for the reader.
    const providerDone = await Promise.race([dp.fake.idle().then(() => true), sleep(6000).then(() => false)]);
    expect(providerDone, 'the provider finished its answer while nobody read it').to.equal(false);
    raw.resume();
    const frames = await answered;
    expect(frames.at(-1)!.type).to.equal('response.completed');
    expect(frames.filter((f) => f.type === 'response.output_text.delta').length).to.be.greaterThan(60_000);
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, reader)).entries).to.equal(1);
    s.ws.close();
  });

  it('a frame sent as soon as the last event of the one before is read waits for that call to finish, and is answered in turn', async () => {
    const s = await socket(dp.proxy.url, k);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 2, textOnly: true }, { kind: 'ok', outputTokens: 3, textOnly: true });
    const got: Record<string, unknown>[] = [];
    const both = new Promise<void>((resolve) =>
      s.ws.on('message', (d: Buffer) => {
        got.push(JSON.parse(d.toString()) as Record<string, unknown>);
        if (got.filter((f) => f.type === 'response.completed').length === 2) resolve();
      }),
    );
    s.ws.send(JSON.stringify(createFrame('tg/gpt-direct', 'one')));
    s.ws.send(JSON.stringify(createFrame('tg/gpt-direct', 'two')));
    await both;
    expect(got.filter((f) => f.type === 'error')).to.deep.equal([]);
    expect(dp.fake.requests.map((r) => JSON.stringify(r.body).includes('"two"'))).to.deep.equal([false, true]);
    s.ws.close();
  });

  it('a conversation that grows past the body limit is refused as a 413 error frame, the socket kept; a frame without it is answered', async () => {
    const small = await startTestProxy(dp.cp, dp.fake, { PROXY_MAX_BODY_BYTES: '8192' });
    try {
      const s = await socket(small.url, k);
      dp.fake.enqueue({ kind: 'ok', outputTokens: 2, textOnly: true }, { kind: 'ok', outputTokens: 2, textOnly: true });
      const first = await s.turn(createFrame('tg/gpt-direct', 'a'.repeat(5000)));
      const id = (first.at(-1)!.response as { id: string }).id;
      const over = await s.turn(createFrame('tg/gpt-direct', 'b'.repeat(5000), { previous_response_id: id }));
      expect(over).to.have.length(1);
      expect(over[0]).to.include({ type: 'error', status: 413 });
      expect((await s.turn(createFrame('tg/gpt-direct', 'fresh'))).at(-1)!.type).to.equal('response.completed');
      expect(dp.fake.requests).to.have.length(2);
      s.ws.close();
    } finally {
      await small.close();
    }
  });

  it("a revoked key's socket is closed within 2 s", async () => {
    const doomed = await seedAnotherKey(dp.cp.deps, k);
    const s = await socket(dp.proxy.url, doomed);
    const started = Date.now();
    await revokeKey(dp.cp.deps, doomed.keyId);
    const { code } = await s.closed;
    expect(code).to.equal(1008);
    expect(Date.now() - started).to.be.lessThan(2000);
  });

  it('a frame over the body limit (10 MiB) closes the socket with 1009; the proxy serves on', async () => {
    const s = await socket(dp.proxy.url, k);
    s.ws.send(JSON.stringify(createFrame('tg/gpt-direct', 'x'.repeat(10 * 1024 * 1024))));
    expect((await s.closed).code).to.equal(1009);
    const again = await socket(dp.proxy.url, k);
    dp.fake.enqueue({ kind: 'ok', outputTokens: 2, textOnly: true });
    expect((await again.turn(createFrame('tg/gpt-direct'))).at(-1)!.type).to.equal('response.completed');
    again.ws.close();
  });

  it('PROXY_RESPONSES_WEBSOCKET=false: the upgrade is answered 426 at once', async () => {
    const proxy = await startTestProxy(dp.cp, dp.fake, { PROXY_RESPONSES_WEBSOCKET: 'false' });
    try {
      const k = await seedKey(dp.cp.deps, { models: ['tg/gpt-direct'] });
      const s = await openResponsesSocket(proxy.url, k.slug, k.secret);
      expect(isSocket(s) ? 101 : s.status).to.equal(426);
    } finally {
      await proxy.close();
    }
  });
});
