/** Random Responses requests for property tests: every field a Responses request shares with Chat Completions and Messages. */
import fc from 'fast-check';

type Json = Record<string, unknown>;

export const text = fc.string({ minLength: 1, maxLength: 12 });
export const toolName = fc.stringMatching(/^[a-z][a-z_]{0,9}$/);
export const args = fc
  .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()), { maxKeys: 3 })
  .map((o) => JSON.stringify(o));
const inputText = text.map((t) => ({ type: 'input_text', text: t }));
const image = fc.webUrl().map((url) => ({ type: 'input_image', image_url: url, detail: 'auto' }));
const userMessage = fc
  .oneof(text, fc.array(fc.oneof(inputText, image), { minLength: 1, maxLength: 3 }))
  .map((content) => ({ type: 'message', role: 'user', content }));

/** An assistant turn: text and/or calls, then one output per call. */
const exchange = fc
  .record({
    texts: fc.array(text, { maxLength: 2 }),
    calls: fc.uniqueArray(fc.record({ call_id: fc.stringMatching(/^call_[a-z0-9]{4}$/), name: toolName, arguments: args }), {
      maxLength: 2,
      selector: (c) => c.call_id,
    }),
    outputs: fc.array(text, { minLength: 2, maxLength: 2 }),
  })
  .filter((x) => x.texts.length + x.calls.length > 0)
  .map(({ texts, calls, outputs }) => {
    const items: Json[] = [];
    if (texts.length)
      items.push({ type: 'message', role: 'assistant', content: texts.map((t) => ({ type: 'output_text', text: t, annotations: [] })) });
    for (const c of calls) items.push({ type: 'function_call', ...c });
    calls.forEach((c, i) => items.push({ type: 'function_call_output', call_id: c.call_id, output: outputs[i] }));
    return items;
  });

export const schema = { type: 'object', properties: { q: { type: 'string' } } };
const tool = fc.record(
  { type: fc.constant('function'), name: toolName, description: text, parameters: fc.constant(schema), strict: fc.boolean() },
  { requiredKeys: ['type', 'name', 'parameters'] },
);

export const responsesRequest = fc
  .record(
    {
      instructions: text,
      developer: text,
      first: userMessage,
      exchanges: fc.array(exchange, { maxLength: 3 }),
      tools: fc.uniqueArray(tool, { minLength: 1, maxLength: 3, selector: (t) => t.name }),
      tool_choice: fc.constantFrom('auto', 'required', 'none', 'named'),
      parallel_tool_calls: fc.boolean(),
      max_output_tokens: fc.integer({ min: 1, max: 4096 }),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      effort: fc.constantFrom('minimal', 'low', 'medium', 'high'),
      format: fc.constant({ type: 'json_schema', name: 'out', schema, strict: true }),
      user: text,
      stream: fc.boolean(),
    },
    { requiredKeys: ['first', 'exchanges'] },
  )
  .map((r) => {
    const input: Json[] = [];
    if (r.developer !== undefined) input.push({ type: 'message', role: 'developer', content: r.developer });
    input.push(r.first, ...r.exchanges.flat());
    const body: Json = { model: 'tg/gpt-direct', input };
    if (r.instructions !== undefined) body.instructions = r.instructions;
    if (r.tools !== undefined) {
      body.tools = r.tools;
      if (r.tool_choice !== undefined) body.tool_choice = r.tool_choice === 'named' ? { type: 'function', name: r.tools[0]!.name } : r.tool_choice;
      if (r.parallel_tool_calls !== undefined) body.parallel_tool_calls = r.parallel_tool_calls;
    }
    for (const key of ['max_output_tokens', 'temperature', 'top_p', 'user', 'stream'] as const) if (r[key] !== undefined) body[key] = r[key];
    if (r.effort !== undefined) body.reasoning = { effort: r.effort };
    if (r.format !== undefined) body.text = { format: r.format };
    return body;
  });
