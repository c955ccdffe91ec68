import { expect } from 'chai';
import fc from 'fast-check';
import { modelFromEntry, type ModelConfig } from '../../../../shared/models.js';
import type { ParsedCall } from '../../../../proxy/call.js';
import type { AnswerTranslator } from '../../../../proxy/translate/types.js';
import { parseCall } from '../../../../proxy/wire/parse.js';
import { geminiRequest } from '../../../../proxy/wire/gemini/request-from-chat.js';
import { chatRequest, geminiToChat } from '../../../../proxy/wire/gemini/request-to-chat.js';
import { chatToGemini } from '../../../../proxy/wire/gemini/request-from-chat.js';
import { SseToJsonArray } from '../../../../proxy/wire/gemini/json-array.js';

/** A Gemini call as the edge parses it: the alias and streaming from its path. */
const parsedGemini = (raw: Buffer, alias: string, stream: boolean) => parseCall('gemini', raw, {}, 'call', { alias, stream });

/**
 * Gemini ↔ Chat Completions: random valid Gemini requests go to Chat and
 * back with every field both formats have intact; a stream, either way,
 * assembles to the same answer as the whole answer however its bytes are
 * split; the JSON-array form of a stream holds the same chunks as its SSE.
 */
type Json = Record<string, unknown>;

const MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/gemini',
  provider: 'gemini-only',
  upstream_model: 'gemini-2.5-flash',
  input_usd_per_mtok: 0.3,
  output_usd_per_mtok: 2.5,
  max_output_tokens: 65536,
  reasoning: true,
});

// Texts never start with `{`: a function's text output that is itself a JSON object reads back as that object.
const text = fc.string({ minLength: 1, maxLength: 20 }).map((s) => `t${s}`);
const id = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/);
const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
const jsonObject = fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((o) => JSON.parse(JSON.stringify(o)) as Json);

const image = fc
  .tuple(fc.constantFrom('image/png', 'image/jpeg', 'image/webp'), fc.base64String({ minLength: 4, maxLength: 16 }))
  .map(([mimeType, data]) => ({ inlineData: { mimeType, data } }));
const userParts = fc.array(
  fc.oneof(
    text.map((t) => ({ text: t })),
    image,
  ),
  { minLength: 1, maxLength: 3 },
);
const functionCall = fc.record({ id, name, args: jsonObject });
const response = fc.oneof(
  text.map((output) => ({ output })),
  jsonObject,
);

/** A model turn (text, function calls or both), then the user turn answering its calls, then maybe a user turn more. */
const exchange = fc
  .tuple(
    fc.option(text, { nil: undefined }),
    fc.uniqueArray(functionCall, { maxLength: 3, selector: (c) => c.id }),
    fc.array(response, { minLength: 3, maxLength: 3 }),
    fc.option(userParts, { nil: undefined }),
  )
  .filter(([t, calls]) => t !== undefined || calls.length > 0)
  .map(([t, calls, responses, more]) => {
    const model = { role: 'model', parts: [...(t === undefined ? [] : [{ text: t }]), ...calls.map((functionCall) => ({ functionCall }))] };
    const answered = calls.map((c, i) => ({ functionResponse: { id: c.id, name: c.name, response: responses[i]! } }));
    return [model, ...(answered.length ? [{ role: 'user', parts: answered }] : []), ...(more ? [{ role: 'user', parts: more }] : [])];
  });

const contents = fc
  .tuple(userParts, fc.array(exchange, { maxLength: 3 }), userParts)
  .map(([first, exchanges, last]) => [{ role: 'user', parts: first }, ...exchanges.flat(), { role: 'user', parts: last }]);

const declaration = fc.record({ name, description: text, parametersJsonSchema: fc.record({ type: fc.constant('object'), properties: jsonObject }) });
const toolsAndConfig = fc.option(
  fc.uniqueArray(declaration, { minLength: 1, maxLength: 3, selector: (d) => d.name }).chain((decls) =>
    fc.record(
      {
        tools: fc.constant([{ functionDeclarations: decls }]),
        toolConfig: fc.oneof(
          fc.constantFrom('AUTO', 'NONE', 'ANY').map((mode) => ({ functionCallingConfig: { mode } })),
          fc.constantFrom(...decls.map((d) => d.name)).map((n) => ({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [n] } })),
        ),
      },
      { requiredKeys: ['tools'] },
    ),
  ),
  { nil: undefined },
);

const generationConfig = fc.record(
  {
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    // Large enough that the thinking budget is not held to half of it (reasoning.ts).
    maxOutputTokens: fc.integer({ min: 33000, max: 65536 }),
    stopSequences: fc.array(text, { minLength: 1, maxLength: 4 }),
    candidateCount: fc.integer({ min: 1, max: 4 }),
    presencePenalty: fc.double({ min: -2, max: 2, noNaN: true }),
    frequencyPenalty: fc.double({ min: -2, max: 2, noNaN: true }),
    seed: fc.integer({ min: 0, max: 1000 }),
    responseMimeType: fc.constant('application/json'),
    responseJsonSchema: fc.record({ type: fc.constant('object'), properties: jsonObject }),
    thinkingConfig: fc.constantFrom(1024, 4096, 16384).map((thinkingBudget) => ({ thinkingBudget })),
  },
  { requiredKeys: [] },
);

const request = fc
  .record(
    {
      contents,
      systemInstruction: fc.array(text, { minLength: 1, maxLength: 2 }).map((texts) => ({ parts: texts.map((t) => ({ text: t })) })),
      generationConfig,
      extra: toolsAndConfig,
    },
    { requiredKeys: ['contents'] },
  )
  .map(({ extra, ...rest }) => {
    const out: Json = { ...rest, ...extra };
    const config = out.generationConfig as Json | undefined;
    if (config && config.responseJsonSchema !== undefined && config.responseMimeType === undefined) delete config.responseJsonSchema;
    if (config && Object.keys(config).length === 0) delete out.generationConfig;
    // As it arrives: JSON text, which has no -0.
    return JSON.parse(JSON.stringify(out)) as Json;
  });

function geminiCall(body: Json, stream = false): ParsedCall {
  return parsedGemini(Buffer.from(JSON.stringify(body)), MODEL.alias, stream);
}

function chatCall(body: Json): ParsedCall {
  const max = body.max_tokens;
  return {
    alias: MODEL.alias,
    stream: body.stream === true,
    maxTokens: typeof max === 'number' ? max : undefined,
    choices: 1,
    body,
    raw: Buffer.from(JSON.stringify(body)),
  };
}

/** The request as Gemini reads it back: the stand-in thought signature Tollgate adds to a foreign function call left out. */
function withoutSignatures(body: Json): Json {
  const copy = JSON.parse(JSON.stringify(body)) as { contents: Array<{ parts: Json[] }> };
  for (const c of copy.contents) for (const p of c.parts) delete p.thoughtSignature;
  return copy as unknown as Json;
}

describe('Gemini ↔ Chat Completions (property)', () => {
  it('a Gemini request taken to Chat and back keeps every field both formats have', () => {
    fc.assert(
      fc.property(request, (body) => {
        const toChat = chatRequest(geminiCall(body), MODEL, { reasoning: true });
        expect(toChat.dropped).to.deep.equal([]);
        const back = geminiRequest(chatCall(toChat.request), MODEL, { reasoning: true });
        expect(back.dropped).to.deep.equal([]);
        expect(withoutSignatures(back.request)).to.deep.equal(body);
      }),
      { numRuns: 300 },
    );
  });

  it('a function call without an id is paired with its response by name, in order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 4 }), (names) => {
        const body = {
          contents: [
            { role: 'user', parts: [{ text: 'go' }] },
            { role: 'model', parts: names.map((n) => ({ functionCall: { name: n, args: {} } })) },
            { role: 'user', parts: [...names].reverse().map((n) => ({ functionResponse: { name: n, response: { output: n } } })) },
          ],
        };
        const chat = chatRequest(geminiCall(body), MODEL).request as { messages: Json[] };
        const calls = (chat.messages[1]!.tool_calls as Array<{ id: string; function: { name: string } }>).map((c) => [c.id, c.function.name]);
        const results = chat.messages.slice(2).map((m) => [m.tool_call_id, m.content]);
        expect(new Map(results as Array<[string, string]>)).to.deep.equal(new Map(calls as Array<[string, string]>));
      }),
    );
  });
});

/** A random Gemini stream: text and function-call chunks, the last with its finish reason; every chunk with the running usage. */
const geminiChunks = fc
  .tuple(
    fc.array(
      fc.oneof(
        text.map((t) => ({ text: t })),
        functionCall.map((functionCall) => ({ functionCall })),
      ),
      { minLength: 1, maxLength: 6 },
    ),
    fc.constantFrom('STOP', 'MAX_TOKENS', 'SAFETY'),
    fc.record({ prompt: fc.nat(5000), cached: fc.nat(1000), out: fc.nat(2000), thoughts: fc.nat(500) }),
  )
  .map(([parts, finishReason, u]) => {
    const usageMetadata = {
      promptTokenCount: u.prompt + u.cached,
      cachedContentTokenCount: u.cached,
      candidatesTokenCount: u.out,
      thoughtsTokenCount: u.thoughts,
      totalTokenCount: u.prompt + u.cached + u.out + u.thoughts,
    };
    return parts.map((part, i) => ({
      candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...(i === parts.length - 1 ? { finishReason } : {}) }],
      usageMetadata,
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-1',
    }));
  });

function through(t: AnswerTranslator, bytes: Buffer, cuts: number[]): string {
  let out = '';
  let at = 0;
  for (const c of cuts) {
    const end = Math.min(bytes.length, at + 1 + c * 3);
    out += t.push(bytes.subarray(at, end)).toString();
    at = end;
  }
  return out + t.push(bytes.subarray(at)).toString() + t.end().toString();
}

const dataLines = (sse: string): unknown[] =>
  sse
    .split(/\r?\n\r?\n/)
    .filter((f) => f.startsWith('data: ') && f !== 'data: [DONE]')
    .map((f) => JSON.parse(f.slice(6)) as unknown);

/** Chat chunks assembled into the completion they stand for. */
function assembleChat(sse: string): Json {
  let content = '';
  const calls: Json[] = [];
  let finish: unknown;
  let usage: unknown;
  for (const chunk of dataLines(sse) as Json[]) {
    if (chunk.usage) usage = chunk.usage;
    const choice = (chunk.choices as Json[])[0];
    if (!choice) continue;
    const delta = choice.delta as Json;
    if (typeof delta.content === 'string') content += delta.content;
    for (const c of (delta.tool_calls as Json[] | undefined) ?? []) calls.push({ id: c.id, function: c.function });
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  return { content, calls, finish, usage };
}

function chatOfWhole(json: Json): Json {
  const choice = (json.choices as Json[])[0]!;
  const message = choice.message as Json;
  const calls = ((message.tool_calls as Json[] | undefined) ?? []).map((c) => ({ id: c.id, function: c.function }));
  return { content: message.content ?? '', calls, finish: choice.finish_reason, usage: json.usage };
}

/** The whole answer a stream of Gemini chunks adds up to. */
function wholeGemini(chunks: Json[]): Json {
  const parts = chunks.flatMap((c) => ((c.candidates as Json[])[0]!.content as { parts: Json[] }).parts);
  const last = chunks.at(-1)!;
  const candidate = { ...(last.candidates as Json[])[0]!, content: { role: 'model', parts } };
  return { ...last, candidates: [candidate] };
}

describe('Gemini streams (property)', () => {
  const chatClient = chatCall({ model: 'x', messages: [], stream: true, stream_options: { include_usage: true } });

  it('a Gemini provider stream assembles, for a Chat client, to the whole answer however it is split', () => {
    fc.assert(
      fc.property(geminiChunks, fc.array(fc.nat(40), { maxLength: 30 }), (chunks, cuts) => {
        const sse = Buffer.from(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(''));
        const streamed = assembleChat(through(chatToGemini.answer(chatClient), sse, cuts));
        const whole = JSON.parse(
          chatToGemini
            .answer(chatClient)
            .json(Buffer.from(JSON.stringify(wholeGemini(chunks))))
            .toString(),
        ) as Json;
        const expected = chatOfWhole(whole);
        // Ids made up for calls that had none differ between two translations; the calls here all have ids.
        expect(streamed).to.deep.equal(expected);
      }),
    );
  });

  it('a Chat provider stream assembles, for a Gemini client, to the whole answer however it is split', () => {
    const geminiClient = geminiCall({ contents: [{ parts: [{ text: 'x' }] }] }, true);
    fc.assert(
      fc.property(geminiChunks, fc.array(fc.nat(40), { maxLength: 30 }), (chunks, cuts) => {
        // The Gemini stream made Chat first, then back to Gemini: what a Gemini client reads of a Chat provider.
        const chatSse = through(chatToGemini.answer(chatClient), Buffer.from(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('')), []);
        const geminiSse = through(geminiToChat.answer(geminiClient), Buffer.from(chatSse), cuts);
        const events = dataLines(geminiSse) as Json[];
        const parts = events.flatMap((e) => ((e.candidates as Json[])[0]!.content as { parts: Json[] }).parts);
        const sent = chunks.map((c) => ((c.candidates as Json[])[0]!.content as { parts: Json[] }).parts[0]!);
        // Text comes as it came; function calls, whose arguments Chat streams in pieces, come whole when the answer finishes.
        expect(parts.filter((p) => p.text !== undefined)).to.deep.equal(sent.filter((p) => p.text !== undefined));
        expect(parts.filter((p) => p.functionCall !== undefined)).to.deep.equal(sent.filter((p) => p.functionCall !== undefined));
        const last = (events.at(-1)!.candidates as Json[])[0]!;
        expect(last.finishReason).to.equal((chunks.at(-1)!.candidates as Json[])[0]!.finishReason);
        // Counts of zero are left out, as Google does.
        const usage = Object.fromEntries(
          Object.entries(chunks.at(-1)!.usageMetadata as Json).filter(([k, v]) => v !== 0 || !/cached|thoughts/.test(k)),
        );
        expect(events.at(-1)!.usageMetadata).to.deep.equal(usage);
      }),
    );
  });

  it('the JSON-array form of a stream holds the SSE form’s chunks, however the SSE is split', () => {
    fc.assert(
      fc.property(geminiChunks, fc.array(fc.nat(40), { maxLength: 30 }), (chunks, cuts) => {
        const sse = Buffer.from(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(''));
        const array = new SseToJsonArray();
        let out = '';
        let at = 0;
        for (const c of cuts) {
          const end = Math.min(sse.length, at + 1 + c * 3);
          out += array.push(sse.subarray(at, end)).toString();
          at = end;
        }
        out += array.push(sse.subarray(at)).toString() + array.end().toString();
        expect(JSON.parse(out)).to.deep.equal(chunks);
      }),
    );
  });
});
