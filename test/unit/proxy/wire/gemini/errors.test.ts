import { expect } from 'chai';
import type { ParsedCall } from '../../../../../proxy/call.js';
import { chatToGemini } from '../../../../../proxy/wire/gemini/request-from-chat.js';
import { geminiToChat } from '../../../../../proxy/wire/gemini/request-to-chat.js';
import { geminiErrorBody } from '../../../../../proxy/wire/gemini/errors.js';
import { parseCall } from '../../../../../proxy/wire/parse.js';

/** A Gemini call as the edge parses it: the alias and streaming from its path. */
const parsedGemini = (raw: Buffer, alias: string, stream: boolean) => parseCall('gemini', raw, {}, 'call', { alias, stream });

const chatCall: ParsedCall = {
  alias: 'tg/g',
  stream: true,
  maxTokens: undefined,
  choices: 1,
  body: { model: 'tg/g', messages: [], stream: true },
  raw: Buffer.alloc(0),
};
const geminiCall = parsedGemini(Buffer.from('{"contents":[]}'), 'tg/g', true);

describe("Gemini errors: Google's shape both ways", () => {
  it("writes Tollgate's own errors as Google does, code and rpc status from the kind", () => {
    expect(JSON.parse(geminiErrorBody('rate_limited', 'Slow down.'))).to.deep.equal({
      error: { code: 429, message: 'Slow down.', status: 'RESOURCE_EXHAUSTED' },
    });
    expect(JSON.parse(geminiErrorBody('unauthenticated', 'No key.'))).to.deep.equal({
      error: { code: 401, message: 'No key.', status: 'UNAUTHENTICATED' },
    });
    expect(JSON.parse(geminiErrorBody('invalid_input', 'contents: required'))).to.deep.include({
      error: { code: 400, message: 'contents: required', status: 'INVALID_ARGUMENT' },
    });
  });

  it("gives a Chat client a Gemini provider's context overflow as context_length_exceeded, Google's message kept", () => {
    const message = 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).';
    const body = Buffer.from(JSON.stringify({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }));
    const out = JSON.parse(chatToGemini.answer(chatCall).error(400, body).toString()) as { error: Record<string, unknown> };
    expect(out.error).to.include({ message, type: 'invalid_request_error', code: 'context_length_exceeded' });
  });

  it("gives a Gemini client a Chat provider's error in Google's shape, same status", () => {
    const body = Buffer.from(JSON.stringify({ error: { message: 'Rate limit reached.', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }));
    expect(JSON.parse(geminiToChat.answer(geminiCall).error(429, body).toString())).to.deep.equal({
      error: { code: 429, message: 'Rate limit reached.', status: 'RESOURCE_EXHAUSTED' },
    });
  });

  it('ends a stream the provider broke off with an error event a Gemini client reads', () => {
    const t = geminiToChat.answer(geminiCall);
    t.push(Buffer.from('data: {"id":"c1","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'));
    const tail = t.end().toString();
    expect(tail).to.match(
      /^data: \{"error":\{"code":502,"message":"The model provider ended the answer before it finished\.","status":"UNAVAILABLE"\}\}\r\n\r\n$/,
    );
  });

  it('ends a Chat client’s stream with an error when a Gemini provider stops without a finish reason', () => {
    const t = chatToGemini.answer(chatCall);
    t.push(Buffer.from('data: {"candidates":[{"content":{"parts":[{"text":"x"}]}}]}\r\n\r\n'));
    expect(t.end().toString()).to.include('"code":null').and.include('ended the answer early');
  });
});
