import { expect } from 'chai';
import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { forward, type ForwardOutcome, type ForwardRequest } from '../../../../proxy/forward.js';
import { createAbandonedReads } from '../../../../proxy/abandoned.js';
import type { AnswerTranslator } from '../../../../proxy/translate/index.js';

/** A translator that marks what it rewrote: enough to see which of its parts the relay ran. */
const marking: AnswerTranslator = {
  json: (body) => Buffer.concat([Buffer.from('json:'), body]),
  push: (chunk) => Buffer.concat([Buffer.from('push:'), chunk]),
  end: () => Buffer.from('end'),
  fail: (message) => Buffer.from(`fail:${message}`),
  error: (status, body) => Buffer.concat([Buffer.from(`error ${status}:`), body]),
  dropped: () => [],
};

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

const MESSAGE_START = `event: message_start\ndata: ${JSON.stringify({
  type: 'message_start',
  message: { usage: { input_tokens: 40, output_tokens: 1 } },
})}\n\n`;
const MESSAGE_END =
  `event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}\n\n` +
  `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } })}\n\n` +
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`;

const CHAT_WHOLE = JSON.stringify({ id: 'x', choices: [], usage: { prompt_tokens: 7, completion_tokens: 9 } });
const CHAT_STREAM =
  `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n` +
  `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1}}\n\n` +
  `data: [DONE]\n\n`;

describe('proxy relay: an attempt relayed through only the layers its call needs', () => {
  const servers: Server[] = [];
  const pools: Pool[] = [];
  /** What the provider does with each request, by path. */
  const answers = new Map<string, (res: ServerResponse) => void>();
  let upstream = '';

  before(async () => {
    const provider = createServer((req, res) => {
      req.resume();
      req.on('end', () => answers.get(req.url ?? '')!(res));
    });
    servers.push(provider);
    upstream = await listen(provider);
  });

  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
    for (const s of servers) s.close();
  });

  /**
   * One call through `forward` inside a real client-facing server; `leave`
   * makes the client hang up once the answer's head would be due.
   */
  async function relayed(
    path: string,
    over: Partial<ForwardRequest> = {},
    leave?: Promise<void>,
  ): Promise<{ outcome: ForwardOutcome; status?: number; headers?: IncomingHttpHeaders; body?: string }> {
    const pool = new Pool(upstream);
    pools.push(pool);
    let outcome: Promise<ForwardOutcome> | undefined;
    const edge = createServer((_req, res) => {
      outcome = forward(
        {
          pool,
          origin: upstream,
          path,
          headers: ['content-type', 'application/json'],
          body: Buffer.from('{}'),
          format: 'chat',
          dropUsageChunk: false,
          translate: undefined,
          extraHeaders: { 'x-request-id': 'req-1' },
          headersTimeoutMs: 5_000,
          idleTimeoutMs: 5_000,
          ...over,
        },
        res,
      );
    });
    servers.push(edge);
    const url = await listen(edge);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('close', () => {
          if (!res.complete) reject(new Error('the response was cut short'));
        });
        res.on(
          'end',
          () =>
            void outcome!.then((o) => resolve({ outcome: o, status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() })),
        );
      });
      req.on('error', (err) => {
        if (!leave) reject(err);
      });
      req.end();
      void leave?.then(() => {
        req.destroy();
        void outcome!.then((o) => resolve({ outcome: o }));
      });
    });
  }

  it("relays a plain answer byte for byte, with the provider's length, and bills what it reported", async () => {
    answers.set('/plain', (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(CHAT_WHOLE) });
      res.end(CHAT_WHOLE);
    });
    const r = await relayed('/plain');
    expect(r.status).to.equal(200);
    expect(r.body).to.equal(CHAT_WHOLE);
    expect(r.headers!['content-length']).to.equal(String(Buffer.byteLength(CHAT_WHOLE)));
    expect(r.headers!['x-request-id']).to.equal('req-1');
    expect(r.outcome.kind).to.equal('complete');
    if (r.outcome.kind === 'complete') expect(r.outcome.tap.usage()).to.deep.include({ inputTokens: 7, outputTokens: 9 });
  });

  it('drops the usage chunk the client did not ask for, while the bill still reads it', async () => {
    answers.set('/chat-stream', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(CHAT_STREAM);
    });
    const r = await relayed('/chat-stream', { dropUsageChunk: true });
    expect(r.body).to.include('"content":"hi"').and.include('[DONE]').and.not.include('"usage"');
    expect(r.outcome.kind).to.equal('complete');
    if (r.outcome.kind === 'complete') expect(r.outcome.tap.usage()).to.deep.include({ inputTokens: 7, outputTokens: 1 });
  });

  it('reads on, for its bill, a failover stream whose client left while its first event was held back', async () => {
    let finish: () => void = () => {};
    const clientLeft = new Promise<void>((resolve) => (finish = resolve));
    answers.set('/held', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Half of the first event: failover holds the head until the event is whole.
      res.write(MESSAGE_START.slice(0, 30));
      setTimeout(finish, 50);
      setTimeout(() => res.end(MESSAGE_START.slice(30) + MESSAGE_END), 150);
    });
    const r = await relayed('/held', { format: 'messages', failover: true, abandoned: createAbandonedReads(4, 5_000) }, clientLeft);
    expect(r.outcome.kind).to.equal('abandoned');
    if (r.outcome.kind !== 'abandoned') return;
    expect(r.outcome.ended).to.equal('complete');
    // The held first event (the prompt's usage) reached the tap once the read went on.
    expect(r.outcome.tap!.usage()).to.deep.include({ inputTokens: 40, outputTokens: 6 });
  });

  it('ends a translated stream the provider breaks off on its error event in the client format, not a reset, and bills it as cut', async () => {
    answers.set('/breaks', (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(MESSAGE_START);
      setTimeout(() => res.socket!.destroy(), 30);
    });
    const r = await relayed('/breaks', { format: 'messages', translate: marking });
    expect(r.status).to.equal(200);
    expect(r.body).to.equal(`push:${MESSAGE_START}fail:The model provider broke off the answer.`);
    expect(r.outcome).to.include({ kind: 'cut', by: 'upstream', headersSent: true });
  });

  it("rewrites a whole answer once complete, without the provider's length", async () => {
    answers.set('/translated', (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(CHAT_WHOLE) });
      res.end(CHAT_WHOLE);
    });
    const r = await relayed('/translated', { translate: marking });
    expect(r.body).to.equal(`json:${CHAT_WHOLE}`);
    expect(r.headers!['content-length']).to.equal(undefined);
    expect(r.outcome.kind).to.equal('complete');
  });
});
