import { expect } from 'chai';
import { AppError } from '../../../../../shared/errors.js';
import { modelFromEntry, type ModelConfig } from '../../../../../shared/models.js';
import { outputCeiling, parseCall } from '../../../../../proxy/wire/index.js';
import { chatToMessages } from '../../../../../proxy/wire/messages/request-from-chat.js';

const MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/claude-direct',
  provider: 'p',
  upstream_model: 'claude-sonnet-4-5',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 64000,
});

function call(body: Record<string, unknown>) {
  return parseCall('chat', Buffer.from(JSON.stringify({ model: MODEL.alias, messages: [{ role: 'user', content: 'hi' }], ...body })), {});
}

function ev(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function chunks(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .filter(Boolean)
    .map((f) => (f === 'data: [DONE]' ? '[DONE]' : JSON.parse(f.slice('data: '.length))));
}

const START = ev('message_start', {
  message: { id: 'msg_1', usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 20, output_tokens: 1 } },
});

describe('translation: Chat Completions client, Messages provider (unit)', () => {
  it('the max_tokens sent without a client limit is the ceiling the hold assumes', () => {
    const c = call({});
    expect(chatToMessages.request(c, MODEL).max_tokens).to.equal(outputCeiling(c, MODEL));
  });

  it('refusals are invalid_input errors naming the field', () => {
    for (const [body, field] of [
      [{ n: 3 }, 'n'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ logprobs: true }, 'logprobs'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ tool_choice: 'required' }, 'tool_choice'],
    ] as const) {
      let err: unknown;
      try {
        chatToMessages.request(call(body), MODEL);
      } catch (e) {
        err = e;
      }
      expect(err, field).to.be.instanceOf(AppError);
      expect((err as AppError).kind).to.equal('invalid_input');
      expect((err as AppError).message.startsWith(`${field}:`), (err as AppError).message).to.equal(true);
    }
  });

  it('a data URL that is not base64 is refused; a user message after tool results starts its own turn', () => {
    expect(() =>
      chatToMessages.request(
        call({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }] }] }),
        MODEL,
      ),
    ).to.throw(AppError, 'messages[0].content[0].image_url.url');
    const out = chatToMessages.request(
      call({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
          { role: 'tool', tool_call_id: 't1', content: 'r' },
          { role: 'user', content: 'and?' },
        ],
      }),
      MODEL,
    );
    expect(out.messages).to.deep.equal([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
      { role: 'user', content: 'and?' },
    ]);
  });

  it('cached prompt tokens are counted in prompt_tokens and named as cached', () => {
    const t = chatToMessages.answer(call({}));
    const body = {
      id: 'msg_1',
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 20, output_tokens: 3 },
    };
    const out = JSON.parse(t.json(Buffer.from(JSON.stringify(body))).toString()) as { usage: unknown };
    expect(out.usage).to.deep.equal({ prompt_tokens: 35, completion_tokens: 3, total_tokens: 38, prompt_tokens_details: { cached_tokens: 20 } });
  });

  it('an error event mid-stream becomes an OpenAI error chunk, and nothing after it is sent', () => {
    const t = chatToMessages.answer(call({ stream: true }));
    const out =
      t.push(Buffer.from(START + ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }) + ev('message_stop', {}))).toString() +
      t.end().toString();
    const got = chunks(out);
    expect(got).to.have.length(2);
    expect(got[1]).to.deep.equal({ error: { message: 'Overloaded', type: 'server_error', param: null, code: 'overloaded' } });
  });

  it('a stream that ends without message_stop ends with an error chunk rather than looking complete', () => {
    const t = chatToMessages.answer(call({ stream: true }));
    const got = chunks(t.push(Buffer.from(START)).toString() + t.end().toString());
    expect(got.at(-1)).to.have.nested.property('error.type', 'server_error');
    expect(got).to.not.include('[DONE]');
  });

  it('nothing is sent until an event is whole, and each event goes out as soon as it is', () => {
    const t = chatToMessages.answer(call({ stream: true }));
    const delta = ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'héllo' } });
    expect(t.push(Buffer.from(START)).length).to.be.greaterThan(0);
    const bytes = Buffer.from(delta);
    // Split inside the two-byte é.
    const cut = bytes.indexOf(0xc3) + 1;
    expect(t.push(bytes.subarray(0, cut)).length).to.equal(0);
    const [chunk] = chunks(t.push(bytes.subarray(cut)).toString()) as Record<string, unknown>[];
    expect(chunk).to.deep.include({ id: 'msg_1', object: 'chat.completion.chunk', model: MODEL.alias });
    expect(chunk!.choices).to.deep.equal([{ index: 0, delta: { content: 'héllo' }, logprobs: null, finish_reason: null }]);
  });

  it('a provider error body that is not JSON keeps its status and gets a message saying so', () => {
    const t = chatToMessages.answer(call({}));
    expect(JSON.parse(t.error(502, Buffer.from('<html>Bad gateway</html>')).toString())).to.deep.equal({
      error: { message: 'The model provider answered with status 502.', type: 'server_error', param: null, code: null },
    });
  });
});
