import { expect } from 'chai';
import { parseCall } from '../../../../../proxy/wire/index.js';
import { translateCall } from '../../../../../proxy/translate/index.js';
import { NEW_TURN_TEXT } from '../../../../../proxy/wire/messages/request-from-chat.js';
import { testConfig } from '../../../../support/control-plane.js';

/**
 * The Responses API answers a conversation that ends on the assistant with a
 * new assistant turn; the Messages API continues that last turn (a prefill).
 * A Responses client on a Messages provider gets what OpenAI would give it.
 */

type Json = Record<string, unknown>;
const MODEL = testConfig().models.models.get('tg/claude-direct')!;

function toMessages(client: 'responses' | 'chat', body: Json): Json[] {
  const call = parseCall(client, Buffer.from(JSON.stringify({ model: MODEL.alias, ...body })), {});
  return translateCall(client, 'messages', call, MODEL).request.messages as Json[];
}

describe('a Responses conversation that ends on the assistant, on a Messages provider', () => {
  it('gets a user turn asking to continue, so the model answers afresh rather than continuing its last message', () => {
    const messages = toMessages('responses', {
      input: [
        { role: 'user', content: 'Name a colour.' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Blue.' }] },
      ],
    });
    expect(messages.slice(-2)).to.deep.equal([
      { role: 'assistant', content: 'Blue.' },
      { role: 'user', content: NEW_TURN_TEXT },
    ]);
  });

  it('is left as it is when it ends on the user, on a tool result, or on a tool call still waiting for its result', () => {
    expect(toMessages('responses', { input: 'Hi.' }).at(-1)).to.include({ role: 'user' });
    const call = { type: 'function_call', call_id: 'call_1', name: 'look', arguments: '{}' };
    const result = { type: 'function_call_output', call_id: 'call_1', output: 'found' };
    const tools = [{ type: 'function', name: 'look', parameters: { type: 'object', properties: {} } }];
    const afterResult = toMessages('responses', { tools, input: [{ role: 'user', content: 'Look.' }, call, result] });
    expect(afterResult.at(-1)).to.deep.include({ role: 'user' });
    expect(JSON.stringify(afterResult.at(-1))).to.include('tool_result');
    const waiting = toMessages('responses', { tools, input: [{ role: 'user', content: 'Look.' }, call] });
    expect(waiting.at(-1)).to.include({ role: 'assistant' });
  });

  it("a Chat client's final assistant turn stays a prefill the answer continues", () => {
    const messages = toMessages('chat', {
      messages: [
        { role: 'user', content: 'Write a haiku.' },
        { role: 'assistant', content: 'Autumn' },
      ],
    });
    expect(messages.at(-1)).to.deep.equal({ role: 'assistant', content: 'Autumn' });
  });
});
