import { expect } from 'chai';
import { request } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { PROVIDER_KINDS } from './kinds.js';

type Answer = {
  status: number;
  headers: Headers;
  text: string;
  body: { error?: { type?: string; message?: string; code?: string } } & Record<string, unknown>;
};

/**
 * What the clients need of `/v1/responses` on the wire, and what bad input
 * gets: compressed bodies (the limit on the decoded size, a bomb refused
 * early), a WebSocket upgrade the proxy does not serve answered 426, dropped names in
 * `x-tollgate-dropped`, stored state refused on a translated provider,
 * token counting, and a 4xx in the OpenAI shape (never a 500) for anything
 * malformed.
 */
describeEachStore('Responses API on the wire: encodings, upgrades, drops and bad input', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_MAX_BODY_BYTES: '65536' } });
    k = await seedKey(dp.cp.deps, { models: ['tg/gpt-responses', 'tg/gpt-direct', 'tg/claude-direct'] });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  async function post(body: string | Buffer, headers: Record<string, string> = {}, path = 'responses'): Promise<Answer> {
    const res = await fetch(`${dp.proxy.url}/${k.slug}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const text = await res.text();
    let parsed: unknown = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: the test says what it expects */
    }
    return { status: res.status, headers: res.headers, text, body: parsed as Answer['body'] };
  }

  const hello = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, input: 'Say hello.', ...extra });

  function expectOpenAIError(a: Answer, status: number, type = 'invalid_request_error'): void {
    expect(a.status, a.text).to.equal(status);
    expect(a.body.error?.type, a.text).to.equal(type);
    expect(a.body.error?.message).to.be.a('string');
  }

  describe('compressed bodies', () => {
    for (const [coding, encode] of [
      ['gzip', gzipSync],
      ['br', brotliCompressSync],
      ['zstd', zstdCompressSync],
      ['deflate', deflateSync],
    ] as const) {
      it(`a ${coding} body is decoded; the provider gets it plain`, async () => {
        const a = await post(encode(Buffer.from(hello('tg/gpt-responses'))), { 'content-encoding': coding });
        expect(a.status, a.text).to.equal(200);
        expect(dp.fake.requests.at(-1)!.body).to.deep.include({ model: 'gpt-5', input: 'Say hello.' });
      });
    }

    it('a body that says gzip but is not → 400 in the OpenAI shape, nothing billed', async () => {
      await dp.proxy.drain();
      const before = await moneyOf(dp.cp.deps, k);
      const a = await post(hello('tg/gpt-responses'), { 'content-encoding': 'gzip' });
      expectOpenAIError(a, 400);
      expect(a.body.error!.message).to.include('gzip');
      expect(dp.fake.requests).to.have.length(0);
      await dp.proxy.drain();
      expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(before.entries);
    });

    it('an unknown coding → 400 naming the ones taken', async () => {
      expectOpenAIError(await post(hello('tg/gpt-responses'), { 'content-encoding': 'compress' }), 400);
    });

    it('a decompression bomb (64 MB of zeros in a small gzip) → 413 once the decoded size passes the limit', async () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
      expect(bomb.length).to.be.lessThan(65536);
      const started = performance.now();
      const a = await post(bomb, { 'content-encoding': 'gzip' });
      expectOpenAIError(a, 413);
      // Refused when the limit passed, not after inflating 64 MB.
      expect(performance.now() - started).to.be.lessThan(2000);
      expect(dp.fake.requests).to.have.length(0);
    });

    it('a decoded body over the limit though its compressed form is under it → 413', async () => {
      const big = JSON.stringify({ model: 'tg/gpt-responses', input: 'x'.repeat(70_000) });
      expectOpenAIError(await post(gzipSync(big), { 'content-encoding': 'gzip' }), 413);
    });
  });

  // The Responses WebSocket itself: test/integration/proxy/responses-websocket.test.ts.
  it('a WebSocket upgrade on another path than /v1/responses (here /v1/responses/input_tokens) is answered 426 at once', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${dp.proxy.url}/${k.slug}/v1/responses/input_tokens`);
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          authorization: `Bearer ${k.secret}`,
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).to.equal(426);
  });

  describe('dropped and named', () => {
    it('an unknown but well-formed tool type on a Chat-only provider is dropped and named in x-tollgate-dropped', async () => {
      const a = await post(
        hello('tg/gpt-direct', {
          tools: [{ type: 'local_shell' }, { type: 'web_search' }, { type: 'function', name: 'f', parameters: { type: 'object' } }],
          tool_choice: 'none',
          prompt_cache_key: 'abc',
          store: false,
          include: ['reasoning.encrypted_content'],
        }),
      );
      expect(a.status, a.text).to.equal(200);
      const dropped = a.headers.get('x-tollgate-dropped')!.split(',');
      expect(dropped).to.include.members(['tools[local_shell]', 'tools[web_search]', 'prompt_cache_key', 'include']);
      const sent = dp.fake.requests.at(-1)!.body as Record<string, unknown>;
      expect((sent.tools as unknown[]).length).to.equal(1);
    });

    it('web_search on a Messages-only provider becomes its server web search tool (not dropped)', async () => {
      const a = await post(hello('tg/claude-direct', { tools: [{ type: 'web_search' }] }));
      expect(a.status, a.text).to.equal(200);
      expect(a.headers.get('x-tollgate-dropped') ?? '').to.not.include('web_search');
      const sent = dp.fake.requests.at(-1)!.body as { tools: { type: string }[] };
      expect(sent.tools.map((t) => t.type)).to.deep.equal(['web_search_20250305']);
    });

    /**
     * Codex 0.169's goal tool output has no `call_id` (issue #40's `input[28].call_id` 400); with it, an
     * output answering a call the conversation no longer holds and an item type no translation knows.
     */
    const GOAL = { type: 'function_call_output', name: 'goal_objective', namespace: 'agent', output: 'goal: ship it' };
    const codexTurn = (model: string) =>
      JSON.stringify({
        model,
        instructions: 'You are Codex.',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
          { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
          GOAL,
          { type: 'function_call_output', call_id: 'call_gone', output: 'from a compacted turn' },
          { type: 'ghost_item_kind', payload: 1 },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go on' }] },
        ],
        tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
        store: false,
        stream: false,
      });
    for (const { kind, model, path } of PROVIDER_KINDS) {
      it(`a tool output without call_id, one whose call is gone and an unknown item: 200 on ${kind}`, async () => {
        const a = await post(codexTurn(model));
        expect(a.status, a.text).to.equal(200);
        const sent = dp.fake.requests.at(-1)!;
        expect(sent.path).to.equal(path);
        const wire = JSON.stringify(sent.body);
        if (model === 'tg/gpt-responses') {
          // Passed through: the provider gets the items as Codex sent them, and nothing is named.
          expect((sent.body as { input: unknown[] }).input).to.deep.include(GOAL);
          expect(a.headers.get('x-tollgate-dropped')).to.equal(null);
          return;
        }
        const dropped = a.headers.get('x-tollgate-dropped')!.split(',');
        expect(dropped).to.include.members(['input[function_call_output].call_id', 'input[ghost_item_kind]']);
        // The two outputs became text the model still reads; the answered call kept its tool result.
        expect(wire).to.include('Output of agent.goal_objective:\\ngoal: ship it').and.include('from a compacted turn').and.include('a.txt');
        expect(wire).to.not.include('call_gone');
      });
    }

    it('a pass-through call drops nothing and sends no header', async () => {
      const a = await post(hello('tg/gpt-responses', { tools: [{ type: 'local_shell' }], tool_choice: 'none' }));
      expect(a.status, a.text).to.equal(200);
      expect(a.headers.get('x-tollgate-dropped')).to.equal(null);
      expect((dp.fake.requests.at(-1)!.body as { tools: unknown[] }).tools).to.deep.equal([{ type: 'local_shell' }]);
    });
  });

  describe('previous_response_id', () => {
    it('one this workspace was not issued is refused with a 404 and never reaches a provider that speaks Responses', async () => {
      const a = await post(hello('tg/gpt-responses', { previous_response_id: 'resp_abc' }));
      expectOpenAIError(a, 404);
      expect(a.body.error!.code).to.equal('previous_response_not_found');
      expect(dp.fake.requests).to.have.length(0);
    });

    for (const model of ['tg/gpt-direct', 'tg/claude-direct']) {
      it(`is refused with a 400 that says to send the whole input on a translated provider (${model})`, async () => {
        const a = await post(hello(model, { previous_response_id: 'resp_abc' }));
        expectOpenAIError(a, 400);
        expect(a.body.error!.message).to.include('send the whole conversation');
        expect(dp.fake.requests).to.have.length(0);
      });
    }
  });

  describe('input_tokens', () => {
    it('is counted by a provider that speaks Responses', async () => {
      const a = await post(hello('tg/gpt-responses'), {}, 'responses/input_tokens');
      expect(a.status, a.text).to.equal(200);
      expect(a.body.input_tokens).to.be.a('number');
      expect(dp.fake.requests.at(-1)!.path).to.equal('/v1/responses/input_tokens');
    });

    for (const model of ['tg/gpt-direct', 'tg/claude-direct']) {
      it(`is estimated by the proxy for ${model}, nothing sent to the provider`, async () => {
        const a = await post(hello(model), {}, 'responses/input_tokens');
        expect(a.status, a.text).to.equal(200);
        expect(a.body).to.deep.include({ object: 'response.input_tokens' });
        expect(a.body.input_tokens).to.be.greaterThan(0);
        expect(dp.fake.requests).to.have.length(0);
      });
    }
  });

  describe('bad input → 4xx in the OpenAI shape, never a 500', () => {
    for (const model of ['tg/gpt-responses', 'tg/gpt-direct', 'tg/claude-direct']) {
      it(`on ${model}`, async () => {
        expectOpenAIError(await post('{"model": "tg/gpt-direct", "input": '), 400);
        expectOpenAIError(await post('not json at all'), 400);
        expectOpenAIError(await post('[1,2]'), 400);
        const bad = (input: unknown) => post(JSON.stringify({ model, input }));
        // A missing call_id is well-formed (Codex's goal tool output: see "dropped and named"); one of the wrong type is not.
        const badCallId = await bad([{ type: 'function_call_output', call_id: 7, output: 'x' }]);
        expectOpenAIError(badCallId, 400);
        expect(badCallId.body.error!.message).to.include('input[0].call_id');
        expectOpenAIError(await bad([{ type: 'message', role: 'user', content: [{ type: 'input_text' }] }]), 400);
        expectOpenAIError(await bad([42]), 400);
        expectOpenAIError(await bad({ role: 'user' }), 400);
        expectOpenAIError(await post(JSON.stringify({ model, input: 'x', max_output_tokens: -1 })), 400);
        expectOpenAIError(await post(JSON.stringify({ model, input: 'x', tools: [{ name: 'no type' }] })), 400);
        expectOpenAIError(await post(JSON.stringify({ model: 'tg/nope', input: 'x' })), 404);
        expect(dp.fake.requests).to.have.length(0);
      });
    }
  });
});
