import { expect } from 'chai';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { estimateCountTokens, IMAGE_TOKENS } from '../../../../../proxy/wire/messages/count-tokens.js';
import { testConfig } from '../../../../support/control-plane.js';

const model = testConfig().models.models.get('tg/gpt-direct')!;
const count = (body: Record<string, unknown>) =>
  estimateCountTokens(
    parseCall('messages', Buffer.from(JSON.stringify({ model: 'tg/gpt-direct', ...body })), { 'anthropic-version': '2023-06-01' }, 'count'),
    model,
  );
const tokens = (text: string) => encode(text).length;

describe('count_tokens estimate for a Chat-Completions-only provider', () => {
  it("counts each message's text with o200k_base plus OpenAI's chat framing (3 per message, 3 for the reply)", async () => {
    expect(await count({ system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there, how are you?' }] })).to.equal(
      3 + 3 + tokens('Be brief.') + 3 + tokens('Hello there, how are you?'),
    );
  });

  it('counts tool calls by name and arguments, tool results by text, tool definitions by their JSON, and a flat figure per image', async () => {
    const base = await count({ messages: [{ role: 'user', content: 'q' }] });
    const image = await count({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'q' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    expect(image - base).to.equal(IMAGE_TOKENS);
    const withTools = await count({
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { id: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { id: 'abc' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found it' }] },
      ],
    });
    const toolsJson = JSON.stringify([
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'string' } } } } },
    ]);
    expect(withTools - base).to.equal(3 + tokens('lookup') + tokens('{"id":"abc"}') + 3 + tokens('found it') + tokens(toolsJson));
  });

  it('refuses what the call itself would refuse', async () => {
    const err = await count({ stop_sequences: ['a', 'b', 'c', 'd', 'e'], messages: [{ role: 'user', content: 'q' }] }).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/^stop_sequences:/);
  });
});
