import { expect } from 'chai';
import { parseCall } from '../../../../proxy/wire/index.js';
import { chatToMessages } from '../../../../proxy/wire/messages/request-from-chat.js';
import { messagesToChat } from '../../../../proxy/wire/messages/request-to-chat.js';

/** What an answer holds that the client's format cannot carry is left out and named, for the access log. */

const messagesCall = () =>
  parseCall('messages', Buffer.from(JSON.stringify({ model: 'tg/gpt', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })), {
    'anthropic-version': '2023-06-01',
  });
const chatCall = (stream: boolean) =>
  parseCall('chat', Buffer.from(JSON.stringify({ model: 'tg/claude', stream, messages: [{ role: 'user', content: 'x' }] })), {});

describe('translation: what answers drop', () => {
  it("a Chat provider's reasoning_content / reasoning never becomes a thinking block (it would need Anthropic's signature)", () => {
    const t = messagesToChat.answer(messagesCall());
    const completion = {
      id: 'chatcmpl-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', reasoning_content: 'let me think' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } },
    };
    const out = JSON.parse(t.json(Buffer.from(JSON.stringify(completion))).toString()) as { content: unknown[]; usage: unknown };
    expect(out.content).to.deep.equal([{ type: 'text', text: 'hi' }]);
    // Anthropic's input_tokens leaves out cache reads; OpenAI's prompt_tokens counts them.
    expect(out.usage).to.deep.equal({ input_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 2 });
    expect(t.dropped()).to.deep.equal(['reasoning_content']);

    const s = messagesToChat.answer(messagesCall());
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-2', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const text =
      s.push(Buffer.from(chunk({ role: 'assistant', reasoning: 'hmm' }) + chunk({ content: 'ok' }) + chunk({}, 'stop'))).toString() +
      s.end().toString();
    expect(text).to.not.include('hmm');
    expect(text).to.include('"text":"ok"');
    expect(s.dropped()).to.deep.equal(['reasoning']);
  });

  it("a Messages provider's thinking blocks are left out of the Chat answer and named", () => {
    const t = chatToMessages.answer(chatCall(false));
    const message = {
      id: 'msg_1',
      content: [
        { type: 'thinking', thinking: 'secret', signature: 's' },
        { type: 'text', text: 'hi' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2, output_tokens: 1 },
    };
    const out = JSON.parse(t.json(Buffer.from(JSON.stringify(message))).toString()) as {
      choices: { message: { content: string } }[];
      usage: unknown;
    };
    expect(out.choices[0]!.message.content).to.equal('hi');
    expect(out.usage).to.deep.equal({ prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, prompt_tokens_details: { cached_tokens: 3 } });
    expect(t.dropped()).to.deep.equal(['content[thinking]']);

    const s = chatToMessages.answer(chatCall(true));
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const text = s
      .push(
        Buffer.from(
          ev('message_start', { message: { id: 'msg_2', usage: { input_tokens: 1, output_tokens: 1 } } }) +
            ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
            ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'secret' } }) +
            ev('content_block_stop', { index: 0 }) +
            ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }) +
            ev('message_stop', {}),
        ),
      )
      .toString();
    expect(text).to.not.include('secret');
    expect(s.dropped()).to.deep.equal(['content[thinking]']);
  });
});
