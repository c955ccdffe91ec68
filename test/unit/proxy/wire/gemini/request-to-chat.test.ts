import { expect } from 'chai';
import { AppError } from '../../../../../shared/errors.js';
import { modelFromEntry } from '../../../../../shared/models.js';
import { parseCall } from '../../../../../proxy/wire/parse.js';
import { chatRequest } from '../../../../../proxy/wire/gemini/request-to-chat.js';

/** A Gemini call as the edge parses it: the alias and streaming from its path. */
const parsedGemini = (raw: Buffer, alias: string, stream: boolean) => parseCall('gemini', raw, {}, 'call', { alias, stream });

const MODEL = modelFromEntry({
  alias: 'tg/gpt',
  provider: 'chat-only',
  upstream_model: 'gpt-4o-mini',
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  max_output_tokens: 16384,
});

const USER = { role: 'user', parts: [{ text: 'hi' }] };

function toChat(body: Record<string, unknown>, reasoning = false): { request: Record<string, unknown>; dropped: string[] } {
  return chatRequest(parsedGemini(Buffer.from(JSON.stringify(body)), 'tg/gpt', false), MODEL, { reasoning });
}

function refusal(body: Record<string, unknown>): AppError {
  try {
    toChat(body);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  return expect.fail('expected the call to be refused');
}

describe('Gemini request → Chat Completions', () => {
  it('names what a Chat provider cannot honour: safety settings, top-K, thought signatures and thoughts', () => {
    const { dropped, request } = toChat({
      contents: [
        USER,
        {
          role: 'model',
          parts: [
            { text: 'x', thought: true },
            { functionCall: { name: 'f', args: {} }, thoughtSignature: 'sig' },
          ],
        },
      ],
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      generationConfig: { topK: 40, temperature: 0.5 },
    });
    expect(dropped).to.have.members(['contents[thought]', 'thoughtSignature', 'generationConfig.topK', 'safetySettings']);
    expect(request.temperature).to.equal(0.5);
  });

  it("refuses content cached on Google's side and more stop sequences than Chat takes, naming the field", () => {
    expect(refusal({ contents: [USER], cachedContent: 'cachedContents/abc' }).message).to.match(/^cachedContent: /);
    expect(refusal({ contents: [USER], generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e'] } }).message).to.match(
      /^generationConfig\.stopSequences: at most 4/,
    );
  });

  it('refuses a malformed part with a 400 naming it', () => {
    const err = refusal({ contents: [{ role: 'user', parts: [{ functionCall: { args: {} } }] }] });
    expect(err.kind).to.equal('invalid_input');
    expect(err.message).to.match(/^contents\[0\]\.parts\[0\]\.functionCall\.name: /);
  });

  it("turns Gemini's OpenAPI `parameters` into JSON Schema (types in lower case, nullable as a null type)", () => {
    const parameters = {
      type: 'OBJECT',
      properties: { city: { type: 'STRING', nullable: true }, days: { type: 'ARRAY', items: { type: 'INTEGER' } } },
      propertyOrdering: ['city'],
    };
    const { request } = toChat({ contents: [USER], tools: [{ functionDeclarations: [{ name: 'weather', parameters }] }] });
    expect(request.tools).to.deep.equal([
      {
        type: 'function',
        function: {
          name: 'weather',
          parameters: { type: 'object', properties: { city: { type: ['string', 'null'] }, days: { type: 'array', items: { type: 'integer' } } } },
        },
      },
    ]);
  });

  it('forces the one allowed function of ANY, and turns Google Search into web search; other Google tools are dropped', () => {
    const { request, dropped } = toChat({
      contents: [USER],
      tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }, { googleSearch: {} }, { codeExecution: {} }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } },
    });
    expect(request.tool_choice).to.deep.equal({ type: 'function', function: { name: 'b' } });
    expect(request.web_search_options).to.deep.equal({});
    expect(dropped).to.deep.equal(['tools[codeExecution]']);
  });

  it('maps a thinking budget to a reasoning effort where the model reasons, and names it dropped where not', () => {
    const body = { contents: [USER], generationConfig: { thinkingConfig: { thinkingBudget: 20000, includeThoughts: true } } };
    const reasoning = toChat(body, true);
    expect(reasoning.request.reasoning_effort).to.equal('high');
    expect(reasoning.dropped).to.deep.equal(['generationConfig.thinkingConfig.includeThoughts']);
    expect(toChat(body).dropped).to.deep.equal(['generationConfig.thinkingConfig.includeThoughts', 'generationConfig.thinkingConfig']);
  });

  it('sends a PDF as a file part and refuses inline data of a type Chat has no part for', () => {
    const pdf = toChat({
      contents: [{ role: 'user', parts: [{ text: 'read' }, { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }] }],
    });
    expect((pdf.request.messages as Array<{ content: unknown }>)[0]!.content).to.deep.equal([
      { type: 'text', text: 'read' },
      { type: 'file', file: { filename: 'file.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ]);
    expect(refusal({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'video/mp4', data: 'AA==' } }] }] }).message).to.match(
      /^contents\[0\]\.parts\[0\]\.inlineData\.mimeType: /,
    );
  });

  it("asks a streamed call's provider for the usage it is billed by, and holds max tokens to the model's ceiling", () => {
    const call = parsedGemini(Buffer.from(JSON.stringify({ contents: [USER], generationConfig: { maxOutputTokens: 99999 } })), 'tg/gpt', true);
    const { request } = chatRequest(call, MODEL);
    expect(request).to.include({ stream: true, max_tokens: 16384, model: 'gpt-4o-mini' });
    expect(request.stream_options).to.deep.equal({ include_usage: true });
  });
});
