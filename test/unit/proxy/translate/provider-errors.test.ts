import { expect } from 'chai';
import { messagesError } from '../../../../proxy/wire/messages/answer-from-chat.js';

/** A Chat provider's error, told to a Messages client (Claude Code) in the words its recovery matches. */
describe('Chat provider errors → Messages client', () => {
  const asMessages = (status: number, body: unknown) =>
    JSON.parse(messagesError(status, Buffer.from(JSON.stringify(body))).toString()) as { error: { type: string; message: string } };

  it('says an OpenAI context overflow as Anthropic does, with the counts Claude Code reads to compact, keeping the provider’s text', () => {
    const openai =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.";
    const { error } = asMessages(400, { error: { message: openai, type: 'invalid_request_error', code: 'context_length_exceeded' } });
    expect(error.type).to.equal('invalid_request_error');
    expect(error.message).to.equal(`prompt is too long: 130512 tokens > 128000 maximum (${openai})`);
    expect(/prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(error.message)?.slice(1)).to.deep.equal(['130512', '128000']);
  });

  it('maps vLLM’s wording, and an overflow without counts still starts with "prompt is too long"', () => {
    const vllm =
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).";
    expect(asMessages(400, { object: 'error', message: vllm }).error.message).to.match(/^prompt is too long: 5000 tokens > 4096 maximum \(/);
    expect(asMessages(400, { error: 'the request exceeds the available context size' }).error.message).to.equal(
      'prompt is too long: (the request exceeds the available context size)',
    );
  });

  it('keeps every other provider error’s message as it is', () => {
    expect(asMessages(400, { error: { message: 'temperature: out of range' } }).error).to.deep.equal({
      type: 'invalid_request_error',
      message: 'temperature: out of range',
    });
    expect(asMessages(429, { error: { message: 'slow down' } }).error.type).to.equal('rate_limit_error');
  });
});
