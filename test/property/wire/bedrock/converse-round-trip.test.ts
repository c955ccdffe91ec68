import { expect } from 'chai';
import fc from 'fast-check';
import { chatRequestFromConverse } from '../../../../proxy/wire/bedrock/converse-to-chat.js';
import { converseRequest } from '../../../../proxy/wire/bedrock/converse-request.js';
import { chatFromConverse } from '../../../../proxy/wire/bedrock/converse-answer.js';
import { converseJsonOf } from '../../../../proxy/wire/bedrock/converse-from-chat.js';

/**
 * A client of the Converse route is served through the Chat pivot, and a
 * Bedrock provider's Converse model is reached from it: random valid
 * Converse requests go to Chat (converse-to-chat.ts) and back to Converse
 * (converse-request.ts) with every field both formats share intact, and
 * random Converse answers read as Chat (converse-answer.ts) come back as the
 * same Converse answer (converse-from-chat.ts).
 */
type Json = Record<string, unknown>;

const text = fc.string({ minLength: 1, maxLength: 20 });
const id = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/);
const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
// Round-tripped because these objects only ever arrive as JSON text, which has no -0 (fc.jsonValue can yield it).
const jsonObject = fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((o) => JSON.parse(JSON.stringify(o)) as Json);

const image = fc
  .tuple(fc.constantFrom('png', 'jpeg', 'gif', 'webp'), fc.base64String({ minLength: 4, maxLength: 16 }))
  .map(([format, bytes]) => ({ image: { format, source: { bytes } } }));
const toolUse = fc.record({ toolUseId: id, name, input: jsonObject }).map((u) => ({ toolUse: u }));
const toolResult = fc.record({ toolUseId: id, content: fc.tuple(text).map(([t]) => [{ text: t }]) }).map((r) => ({ toolResult: r }));

/** A user turn: its tool results first (Chat's `tool` messages come before the user's own message), then its text and images. */
const userTurn = fc
  .tuple(
    fc.array(toolResult, { maxLength: 2 }),
    fc.array(
      fc.oneof(
        text.map((t) => ({ text: t })),
        image,
      ),
      { maxLength: 3 },
    ),
  )
  .filter(([results, rest]) => results.length + rest.length > 0)
  .map(([results, rest]) => ({ role: 'user', content: [...results, ...rest] }));
/** An assistant turn: at most one text (Chat's message has one), then its tool uses. */
const assistantTurn = fc
  .tuple(fc.option(text, { nil: undefined }), fc.array(toolUse, { maxLength: 2 }))
  .filter(([t, uses]) => t !== undefined || uses.length > 0)
  .map(([t, uses]) => ({ role: 'assistant', content: [...(t === undefined ? [] : [{ text: t }]), ...uses] }));

/** Turns alternating from the user's, ending on either role. */
const messages = fc
  .tuple(fc.array(fc.tuple(userTurn, assistantTurn), { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([pairs, endOnUser]) => (endOnUser ? pairs.flat().slice(0, -1) : pairs.flat()));

const toolSpec = fc.record(
  { name, description: text, inputSchema: fc.constant({ json: { type: 'object', properties: { city: { type: 'string' } } } }) },
  { requiredKeys: ['name', 'inputSchema'] },
);
const toolConfig = fc.record(
  {
    tools: fc.uniqueArray(toolSpec, { minLength: 1, maxLength: 3, selector: (t) => t.name }).map((specs) => specs.map((s) => ({ toolSpec: s }))),
    toolChoice: fc.oneof(
      fc.constant({ auto: {} }),
      fc.constant({ any: {} }),
      name.map((n) => ({ tool: { name: n } })),
    ),
  },
  { requiredKeys: ['tools'] },
);
const inferenceConfig = fc.record(
  {
    maxTokens: fc.integer({ min: 1, max: 4096 }),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    stopSequences: fc.array(text, { minLength: 1, maxLength: 4 }),
  },
  { requiredKeys: [] },
);

const converseBody = fc.record(
  {
    messages,
    system: fc.array(
      text.map((t) => ({ text: t })),
      { minLength: 1, maxLength: 2 },
    ),
    inferenceConfig,
    toolConfig,
  },
  { requiredKeys: ['messages'] },
);

describe('property: Converse → Chat → Converse', () => {
  it('keeps system, turns (text, images, tool uses and results), tools, tool choice and sampling', () => {
    fc.assert(
      fc.property(converseBody, (body) => {
        const { request, dropped } = chatRequestFromConverse(JSON.parse(JSON.stringify(body)), 'amazon.nova-pro-v1:0', false);
        expect(dropped).to.deep.equal([]);
        const back = converseRequest(request);
        const expected: Json = { messages: body.messages };
        if (body.system) expected.system = body.system;
        if (body.inferenceConfig && Object.keys(body.inferenceConfig).length) expected.inferenceConfig = body.inferenceConfig;
        if (body.toolConfig) expected.toolConfig = body.toolConfig;
        expect(back).to.deep.equal(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps an answer’s text, tool uses, stop reason and usage split when read as Chat and written as Converse again', () => {
    const answer = fc.record({
      text: fc.option(text, { nil: undefined }),
      uses: fc.array(toolUse, { maxLength: 2 }),
      stopReason: fc.constantFrom('end_turn', 'max_tokens', 'tool_use', 'content_filtered'),
      usage: fc.record({
        inputTokens: fc.nat(10_000),
        outputTokens: fc.nat(10_000),
        cacheReadInputTokens: fc.nat(10_000),
        cacheWriteInputTokens: fc.nat(10_000),
      }),
    });
    fc.assert(
      fc.property(answer, (a) => {
        const content = [...(a.text === undefined ? [] : [{ text: a.text }]), ...a.uses];
        const converse = { output: { message: { role: 'assistant', content } }, stopReason: a.stopReason, usage: a.usage, metrics: { latencyMs: 9 } };
        const back = converseJsonOf(chatFromConverse(converse, 'm'), 9, new Set());
        const u = a.usage;
        const total = u.inputTokens + u.cacheReadInputTokens + u.cacheWriteInputTokens + u.outputTokens;
        expect(back).to.deep.equal({ ...converse, usage: { ...u, totalTokens: total } });
      }),
      { numRuns: 300 },
    );
  });
});
