import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { PROVIDER_KINDS } from './kinds.js';

type Json = Record<string, unknown>;

/** The requests a real Codex 0.171 sent in a long session (test/support/capture/codex-session.ts), scrubbed. */
const captured = (name: string): Json[] =>
  (JSON.parse(readFileSync(`test/fixtures/captures/${name}.json`, 'utf8')) as { requests: { body: Json }[] }).requests.map((r) => r.body);

/** The goal tool's output without `call_id`, as Codex 0.171 sends it after its goal turn (issue #40's `input[28].call_id`). */
function goalReplay(): Json {
  const body = captured('codex-session-mcp').find((b) =>
    (b.input as Json[]).some((i) => i.type === 'function_call_output' && i.call_id === undefined && i.name === 'goal_objective'),
  );
  if (!body) throw new Error('the capture holds no goal output without call_id');
  return body;
}

describeEachStore('Codex 0.171 items on the wire: a captured goal output replayed, encrypted reasoning', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  async function post(body: Json | string, path = 'responses'): Promise<{ status: number; headers: Headers; text: string }> {
    const res = await fetch(`${dp.proxy.url}/${k.slug}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  for (const { kind, model, path } of PROVIDER_KINDS) {
    const passthrough = path === '/v1/responses';
    it(`the captured request with the goal tool's output without call_id: 200 on ${kind}${passthrough ? ', passed as sent' : ', the output named as dropped and sent as text'}`, async () => {
      const body: Json = { ...goalReplay(), model };
      const a = await post(body);
      expect(a.status, a.text).to.equal(200);
      expect(a.text).to.include('response.completed');
      const sent = dp.fake.requests.at(-1)!;
      expect(sent.path).to.equal(path);
      if (passthrough) {
        expect((sent.body as Json).input).to.deep.equal(body.input);
        expect(a.headers.get('x-tollgate-dropped')).to.equal(null);
        return;
      }
      expect(a.headers.get('x-tollgate-dropped')!.split(',')).to.include('input[function_call_output].call_id');
      expect(sent.raw).to.include('Output of agent.goal_objective:\\nsay done');
    });
  }

  describe('encrypted reasoning (include: ["reasoning.encrypted_content"], store: false)', () => {
    const REASONING = '{"id":"rs_0a1b2c3d4e5f","type":"reasoning","summary":[],"encrypted_content":"gAAAABnX2l0c19zZWNyZXRfdGhvdWdodHM+Pz8/Lw=="}';
    const conversation = (model: string) =>
      `{"model":${JSON.stringify(model)},"store":false,"include":["reasoning.encrypted_content"],"stream":true,"input":[` +
      `{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]},${REASONING},` +
      `{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"},` +
      `{"type":"function_call_output","call_id":"call_1","output":"a.txt"}],` +
      `"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],"tool_choice":"none","max_output_tokens":1000}`;

    it('on a Responses provider the reasoning items and their ids pass byte for byte, both ways', async () => {
      dp.fake.enqueue({ kind: 'ok', reasoningTokens: 7, outputTokens: 2, tools: 'none' });
      const a = await post(conversation('tg/gpt-responses'));
      expect(a.status, a.text).to.equal(200);
      const sent = dp.fake.requests.at(-1)!;
      // The request: the client's bytes, only the model's name replaced (its output limit is within the alias's, so it stays).
      expect(sent.raw).to.equal(conversation('gpt-5'));
      expect(sent.raw).to.include(REASONING);
      // The answer: the provider's reasoning item, its id and encrypted content, as the provider wrote it.
      const item = /\{"id":"rs_[^"]+","type":"reasoning","summary":\[\],"encrypted_content":"gAAAAB[^"]+"\}/.exec(a.text);
      expect(item, a.text).to.not.equal(null);
      expect(a.headers.get('x-tollgate-dropped')).to.equal(null);
    });

    for (const { kind, model } of PROVIDER_KINDS.slice(1)) {
      it(`on ${kind} they are dropped and named, the rest of the conversation kept`, async () => {
        const a = await post(conversation(model));
        expect(a.status, a.text).to.equal(200);
        const dropped = a.headers.get('x-tollgate-dropped')!.split(',');
        expect(dropped).to.include.members(['input[reasoning]', 'include']);
        const raw = dp.fake.requests.at(-1)!.raw;
        expect(raw).to.not.include('gAAAAB').and.not.include('rs_0a1b2c3d4e5f');
        expect(raw).to.include('list the files').and.include('a.txt');
      });
    }
  });

  describe('POST /v1/responses/compact (older Codex versions)', () => {
    const compact = (model: string): Json => ({
      model,
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
        { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
      ],
      tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
      parallel_tool_calls: true,
    });

    for (const { kind, model, path } of PROVIDER_KINDS) {
      it(`answers exactly one compaction item on ${kind}, billed as a compaction`, async () => {
        const a = await post(compact(model), 'responses/compact');
        expect(a.status, a.text).to.equal(200);
        const output = (JSON.parse(a.text) as { output: Json[] }).output;
        expect(output.map((i) => i.type)).to.deep.equal(['compaction']);
        expect(output[0]!.encrypted_content).to.be.a('string').and.not.equal('');
        const sent = dp.fake.requests.at(-1)!;
        expect(sent.path).to.equal(path);
        if (path === '/v1/responses') expect((sent.body as { input: Json[] }).input.at(-1)).to.deep.equal({ type: 'compaction_trigger' });
        else expect(sent.raw).to.include('conversation above is about to be replaced by a summary');
        await dp.proxy.drain();
        const rows = await dp.cp.deps.db.query<{ format: string }>(
          `SELECT format FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at DESC LIMIT 1`,
          [k.keyId],
        );
        expect(rows[0]!.format).to.equal('compaction');
      });
    }

    it('a body that is not JSON → 400 in the OpenAI shape, nothing sent', async () => {
      const a = await post('{"model":', 'responses/compact');
      expect(a.status).to.equal(400);
      expect((JSON.parse(a.text) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
      expect(dp.fake.requests).to.have.length(0);
    });
  });

  describe('a compaction body large enough to be worked on in a worker thread', () => {
    let big: DataPlane;
    before(async () => {
      big = await startDataPlane(store, { env: { PROXY_OFFLOAD_BODY_BYTES: '1' } });
      k = await seedKey(big.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
    });
    after(() => big.close());

    it('is still answered with its one compaction item on a translated provider (the trigger stays with the call)', async () => {
      const res = await fetch(`${big.proxy.url}/${k.slug}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tg/gpt-direct',
          stream: true,
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(100_000) }] }, { type: 'compaction_trigger' }],
        }),
      });
      const text = await res.text();
      expect(res.status, text).to.equal(200);
      const done = text.split('\n').find((l) => l.startsWith('data: ') && l.includes('"response.completed"'))!;
      const output = (JSON.parse(done.slice(6)) as { response: { output: Json[] } }).response.output;
      expect(output.map((i) => i.type)).to.deep.equal(['compaction']);
      expect(big.fake.requests.at(-1)!.raw).to.include('conversation above is about to be replaced by a summary');
    });
  });
});
