import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { rejectionOf, words } from './helpers.js';

describe('fake upstream: stall, reset and client aborts', () => {
  let fake: FakeUpstream;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello there' }] };
  const message = { model: 'claude-haiku-4-5', max_tokens: 1000, messages: [{ role: 'user' as const, content: 'hello there' }] };

  before(async () => {
    fake = await startFakeUpstream();
    openai = new OpenAI({ apiKey: 'sk-provider', baseURL: fake.chatCompletionsBaseUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'sk-ant-provider', baseURL: fake.messagesBaseUrl, maxRetries: 0 });
  });
  beforeEach(() => fake.reset());
  after(() => fake.close());

  it('stall before-headers holds the request until the client aborts, then marks it aborted', async () => {
    fake.enqueue({ kind: 'stall', when: 'before-headers' });
    const controller = new AbortController();
    const pending = openai.chat.completions.create(chat, { signal: controller.signal });
    await fake.waitForRequests(1);
    expect(fake.requests[0]!.aborted).to.equal(false);
    controller.abort();
    expect(await rejectionOf(pending)).to.be.instanceOf(OpenAI.APIUserAbortError);
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(true);
  });

  it('stall after-first-event sends the role chunk, then holds until the client aborts', async () => {
    fake.enqueue({ kind: 'stall', when: 'after-first-event' });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create({ ...chat, stream: true }, { signal: controller.signal });
    const chunks: ChatCompletionChunk[] = [];
    // The openai stream ends quietly when its signal aborts.
    for await (const chunk of stream) {
      chunks.push(chunk);
      controller.abort();
    }
    expect(chunks).to.have.length(1);
    expect(chunks[0]!.choices[0]!.delta.role).to.equal('assistant');
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(true);
  });

  it('stall after-first-event on Messages sends message_start, then an abort from stream() is recorded', async () => {
    fake.enqueue({ kind: 'stall', when: 'after-first-event' });
    const stream = anthropic.messages.stream(message);
    const seen: string[] = [];
    stream.on('streamEvent', (event) => {
      seen.push(event.type);
      stream.abort();
    });
    expect(await rejectionOf(stream.finalMessage())).to.be.instanceOf(Anthropic.APIUserAbortError);
    expect(seen).to.deep.equal(['message_start']);
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(true);
  });

  it('a client abort in the middle of a paced stream stops the fake writing and marks the request aborted', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 10_000, eventDelayMs: 2 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create({ ...chat, stream: true }, { signal: controller.signal });
    let received = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content !== undefined) received++;
      if (received === 3) controller.abort();
    }
    expect(received).to.equal(3);
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(true);
  });

  it('a stream the client reads to the end is not marked aborted', async () => {
    const stream = anthropic.messages.stream(message);
    expect((await stream.finalMessage()).usage.output_tokens).to.equal(12);
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(false);
  });

  it('reset after N events delivers exactly those events, then the stream fails; the next request works', async () => {
    fake.enqueue({ kind: 'reset', afterEvents: 3 });
    const stream = await openai.chat.completions.create({ ...chat, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    await rejectionOf(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content)).to.deep.equal(['', 'tok1', ' tok2']);
    await fake.idle();
    expect(fake.requests[0]!.aborted).to.equal(false);
    const next = await openai.chat.completions.create(chat);
    expect(next.choices[0]!.message.content).to.equal(words(12));
  });

  it('reset on a Messages stream fails finalMessage() after the events it sent', async () => {
    fake.enqueue({ kind: 'reset', afterEvents: 5 });
    const stream = anthropic.messages.stream(message);
    const text: string[] = [];
    stream.on('text', (delta) => text.push(delta));
    await rejectionOf(stream.finalMessage());
    // message_start, content_block_start, ping, then two deltas.
    expect(text).to.deep.equal(['tok1', ' tok2']);
  });

  it('reset on a non-streamed request cuts the body short and the client call fails', async () => {
    fake.enqueue({ kind: 'reset', afterEvents: 0 }, { kind: 'reset', afterEvents: 0 });
    const openaiErr = await rejectionOf(openai.chat.completions.create(chat));
    expect(openaiErr).to.be.instanceOf(Error);
    expect(openaiErr).not.to.be.instanceOf(OpenAI.APIError);
    const anthropicErr = await rejectionOf(anthropic.messages.create(message));
    expect(anthropicErr).to.be.instanceOf(Error);
    expect(anthropicErr).not.to.be.instanceOf(Anthropic.APIError);
    expect(fake.requests).to.have.length(2);
  });
});
