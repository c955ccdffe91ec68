import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { countInputTokens } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, edgeRequest, FORMATS, modelBody, servedAs } from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';

/** tg/sonnet: $3 / $15 per million tokens, i.e. 3 and 15 micro-dollars per token. */
function sonnetUsd(input: number, output: number): number {
  return (input * 3 + output * 15) / 1_000_000;
}

/** A stream's events: Google ends each with CRLF CRLF, the others with two LFs. */
function frames(text: string): string[] {
  return text.split(/\r?\n\r?\n/).filter((f) => f.trim() !== '');
}

/**
 * The first event each format's stream opens with, and how many of tg/sonnet's
 * provider's events it takes: Gemini's stream has no opening event, so a
 * Gemini client's first is the first text, which Chat's stream sends after
 * its role chunk.
 */
const FIRST_EVENT: Record<WireFormat, { text: string; upstreamEvents: number }> = {
  chat: { text: 'data: ', upstreamEvents: 1 },
  messages: { text: 'event: message_start', upstreamEvents: 1 },
  responses: { text: 'event: response.created', upstreamEvents: 1 },
  gemini: { text: 'data: {"candidates":', upstreamEvents: 2 },
};

/** Each format's failure event: how a translated stream that breaks ends, so the client's SDK raises it. */
const FAILURE_EVENT: Record<WireFormat, RegExp> = {
  chat: /^data: \{"error":/,
  messages: /^event: error\n/,
  responses: /^event: response\.failed\n/,
  gemini: /^data: \{"error":/,
};

/**
 * A broken stream as the client sees it: cut where the provider speaks the
 * client's format (its bytes are relayed), ended on the format's failure
 * event where it is translated (tg/sonnet's provider speaks Chat and Messages).
 */
async function streamBroken(format: WireFormat, res: Response): Promise<boolean> {
  if (servedAs(format) === format) return readingFails(res);
  const last = frames(await res.text()).at(-1) ?? '';
  return FAILURE_EVENT[format].test(last);
}

/** tg/sonnet's provider's error, sent as it is and as the client sees it: a translated call's in the client's error shape. */
const UPSTREAM_SAYS_NO: Record<WireFormat, { sent: unknown; seen: unknown }> = {
  chat: { sent: { marker: 'upstream said no' }, seen: { marker: 'upstream said no' } },
  messages: { sent: { marker: 'upstream said no' }, seen: { marker: 'upstream said no' } },
  responses: { sent: openAiSaysNo(), seen: openAiSaysNo() },
  gemini: { sent: openAiSaysNo(), seen: { error: { code: 400, message: 'upstream said no', status: 'INVALID_ARGUMENT' } } },
};

function openAiSaysNo() {
  return { error: { message: 'upstream said no', type: 'invalid_request_error', param: null, code: null } };
}

/** Whether reading the whole body throws, as it does when the proxy breaks the client's stream. */
async function readingFails(res: Response): Promise<boolean> {
  try {
    await res.text();
    return false;
  } catch {
    return true;
  }
}

async function openStream(proxyUrl: string, format: WireFormat, slug: string, key: string, body: unknown, signal?: AbortSignal) {
  const { url, init } = edgeRequest(proxyUrl, format, slug, key, body, { signal });
  return fetch(url, init);
}

describeEachStore('proxy: streaming passes through and is metered on the side', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_UPSTREAM_IDLE_TIMEOUT_MS: '2000' } });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  it('Chat Completions: asks upstream for usage, bills it exactly, and drops the usage-only chunk the client did not ask for', async () => {
    const k = await seedKey(dp.cp.deps);
    const body = modelBody('chat', { stream: true });
    const res = await openStream(dp.proxy.url, 'chat', k.slug, k.secret, body);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.include('text/event-stream');
    expect(res.headers.get('x-request-id')).to.match(/^req_/);
    const text = await res.text();
    const fs = frames(text);
    expect(fs.at(-1)).to.equal('data: [DONE]');
    const chunks = fs
      .slice(0, -1)
      .map((f) => JSON.parse(f.slice('data: '.length)) as { choices: { delta: { content?: string } }[]; usage?: unknown });
    expect(chunks.every((c) => c.choices.length > 0)).to.equal(true);
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? '').join('')).to.match(/^tok1 tok2/);
    const upstreamBody = dp.fake.requests.at(-1)!.body as { stream_options: { include_usage: boolean } };
    expect(upstreamBody.stream_options.include_usage).to.equal(true);
    await dp.proxy.drain();
    const m = await moneyOf(dp.cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.closeTo(sonnetUsd(countInputTokens(body), 12), 1e-9);
  });

  it('Chat Completions: a client that asked for include_usage gets the usage chunk unchanged', async () => {
    const k = await seedKey(dp.cp.deps);
    const res = await openStream(
      dp.proxy.url,
      'chat',
      k.slug,
      k.secret,
      modelBody('chat', { stream: true, stream_options: { include_usage: true } }),
    );
    const fs = frames(await res.text());
    const usageChunk = JSON.parse(fs.at(-2)!.slice('data: '.length)) as { choices: unknown[]; usage: { completion_tokens: number } };
    expect(usageChunk.choices).to.deep.equal([]);
    expect(usageChunk.usage.completion_tokens).to.equal(12);
  });

  it('Messages: the event stream arrives in order and is billed from message_start and the last message_delta', async () => {
    const k = await seedKey(dp.cp.deps);
    const body = modelBody('messages', { stream: true, max_tokens: 7 });
    const res = await openStream(dp.proxy.url, 'messages', k.slug, k.secret, body);
    const events = frames(await res.text()).map((f) => /^event: (\S+)/.exec(f)?.[1]);
    expect(events[0]).to.equal('message_start');
    expect(events.filter((e) => e === 'content_block_delta')).to.have.length(7);
    expect(events.slice(-2)).to.deep.equal(['message_delta', 'message_stop']);
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, k)).spend).to.be.closeTo(sonnetUsd(countInputTokens(body), 7), 1e-9);
  });

  for (const format of FORMATS) {
    it(`${format}: streamed and non-streamed spend of the same call agree`, async () => {
      const streamed = await seedKey(dp.cp.deps);
      const whole = await seedKey(dp.cp.deps);
      const body = modelBody(format, { max_tokens: 9 });
      await (await openStream(dp.proxy.url, format, streamed.slug, streamed.secret, { ...body, stream: true })).text();
      expect((await edgeCall(dp.proxy.url, format, whole.slug, whole.secret, body)).status).to.equal(200);
      await dp.proxy.drain();
      const a = await moneyOf(dp.cp.deps, streamed);
      const b = await moneyOf(dp.cp.deps, whole);
      expect(a.spend).to.be.greaterThan(0);
      expect(a.spend).to.equal(b.spend);
    });

    it(`${format}: the first event reaches the client while upstream still streams; after a client abort the silent answer is read on until the idle timeout cuts it, billed non-zero`, async () => {
      const k = await seedKey(dp.cp.deps);
      dp.fake.enqueue({ kind: 'stall', when: 'after-first-event', afterEvents: FIRST_EVENT[format].upstreamEvents });
      const abort = new AbortController();
      const res = await openStream(dp.proxy.url, format, k.slug, k.secret, modelBody(format, { stream: true }), abort.signal);
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value!).toString()).to.include(FIRST_EVENT[format].text);
      abort.abort();
      await dp.fake.idle();
      expect(dp.fake.requests.at(-1)!.aborted).to.equal(true);
      // The cut is settled just after the provider's connection closes (docs/proxy.md, "A client that leaves").
      let m = await moneyOf(dp.cp.deps, k);
      for (let i = 0; i < 100 && m.entries === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        await dp.proxy.drain();
        m = await moneyOf(dp.cp.deps, k);
      }
      expect(m.entries).to.equal(1);
      expect(m.spend).to.be.greaterThan(0);
    });

    it(`${format}: an upstream reset mid-stream breaks the client's stream and bills what was used`, async () => {
      const k = await seedKey(dp.cp.deps);
      dp.fake.enqueue({ kind: 'reset', afterEvents: 3 });
      const res = await openStream(dp.proxy.url, format, k.slug, k.secret, modelBody(format, { stream: true }));
      expect(await streamBroken(format, res)).to.equal(true);
      await dp.proxy.drain();
      const m = await moneyOf(dp.cp.deps, k);
      expect(m.entries).to.equal(1);
      expect(m.spend).to.be.greaterThan(0);
    });

    it(`${format}: an upstream that goes silent mid-stream is cut at the idle timeout and aborted`, async () => {
      const k = await seedKey(dp.cp.deps);
      dp.fake.enqueue({ kind: 'stall', when: 'after-first-event' });
      const res = await openStream(dp.proxy.url, format, k.slug, k.secret, modelBody(format, { stream: true }));
      expect(await streamBroken(format, res)).to.equal(true);
      await dp.fake.idle();
      expect(dp.fake.requests.at(-1)!.aborted).to.equal(true);
      await dp.proxy.drain();
      expect((await moneyOf(dp.cp.deps, k)).spend).to.be.greaterThan(0);
    });

    it(`${format}: an upstream error on a stream request reaches the client, in its own error shape, and releases the hold`, async () => {
      const k = await seedKey(dp.cp.deps, { budgetUsd: 2 });
      dp.fake.enqueue({ kind: 'error', status: 400, body: UPSTREAM_SAYS_NO[format].sent });
      const res = await openStream(dp.proxy.url, format, k.slug, k.secret, modelBody(format, { stream: true, max_tokens: 60000 }));
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal(UPSTREAM_SAYS_NO[format].seen);
      await dp.proxy.drain();
      expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(0);
      // The ~$0.90 hold is gone: a second call of the same size is admitted.
      const again = await edgeCall(dp.proxy.url, format, k.slug, k.secret, modelBody(format, { max_tokens: 60000 }));
      expect(again.status, again.text).to.equal(200);
    });
  }
});
