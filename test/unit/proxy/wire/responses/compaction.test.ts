import { expect } from 'chai';
import { parseResponsesRequest } from '../../../../../proxy/wire/responses/schema.js';
import { answerFromChat } from '../../../../../proxy/wire/responses/answer-from-chat.js';
import { COMPACTION_PROMPT, compactionItem, SUMMARY_INTRO, summaryOf } from '../../../../../proxy/wire/responses/compaction.js';
import { responsesCall } from '../../../../../proxy/wire/responses/context.js';
import { requestToChat } from '../../../../../proxy/wire/responses/request-to-chat.js';
import { responsesAnswerFromChat } from '../../../../../proxy/wire/responses/stream-from-chat.js';

type Json = Record<string, unknown>;
const NONE = { reasoning: false, webSearch: false };

/** What Codex 0.171 sends when its conversation outgrew the window (test/fixtures/captures/codex-session.json). */
const COMPACT_REQUEST: Json = {
  model: 'tg/gpt-direct',
  stream: true,
  store: false,
  tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } }],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Write hello to a.txt.' }] },
    { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"echo hello > a.txt"}' },
    { type: 'function_call_output', call_id: 'c1', output: 'exit 0' },
    { type: 'compaction_trigger' },
  ],
};

const head = { id: 'chatcmpl-c1', object: 'chat.completion.chunk', created: 1, model: 'up' };
const chunk = (delta: Json, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
const sse = (chunks: unknown[]) => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');
const events = (text: string): Json[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as Json);

describe('Responses compaction on a provider without the Responses API', () => {
  it('asks the model for a summary in place of the trigger, tools declared but not callable', () => {
    const { request, dropped } = requestToChat(parseResponsesRequest(COMPACT_REQUEST), 'up', NONE);
    const messages = request.messages as Json[];
    expect(messages.at(-1)).to.deep.equal({ role: 'user', content: COMPACTION_PROMPT });
    expect(request.tool_choice).to.equal('none');
    expect(request.parallel_tool_calls).to.equal(undefined);
    expect(request.tools).to.have.length(1);
    expect(dropped).to.not.include('input[compaction_trigger]');
  });

  it('streams the summary as exactly one compaction item, no text events', () => {
    const answer = responsesAnswerFromChat(responsesCall('tg/gpt-direct', parseResponsesRequest(COMPACT_REQUEST)));
    const text =
      answer
        .push(
          Buffer.from(
            sse([
              chunk({ role: 'assistant', content: '' }),
              chunk({ content: 'The user wants hello ' }),
              chunk({ content: 'in a.txt; done.' }),
              chunk({}, 'stop'),
              { ...head, choices: [], usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 } },
              '[DONE]',
            ]),
          ),
        )
        .toString() + answer.end().toString();
    const all = events(text);
    expect(all.map((e) => e.type)).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = all.at(-1)!.response as Json;
    const output = done.output as Json[];
    expect(output).to.have.length(1);
    expect(output[0]!.type).to.equal('compaction');
    expect(summaryOf(output[0]!)).to.equal('The user wants hello in a.txt; done.');
    expect(all[3]!.item).to.deep.equal(output[0]);
    expect((done.usage as Json).output_tokens).to.equal(9);
  });

  it('answers a whole (unstreamed) compaction with one compaction item', () => {
    const call = responsesCall('tg/gpt-direct', parseResponsesRequest({ ...COMPACT_REQUEST, stream: false }));
    const answer = answerFromChat(call, {
      id: 'chatcmpl-2',
      created: 1,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Summary.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 2 },
    });
    const output = answer.output as Json[];
    expect(output.map((i) => i.type)).to.deep.equal(['compaction']);
    expect(summaryOf(output[0]!)).to.equal('Summary.');
  });

  it('reads its own compaction item back as the summary text when the next turn sends it, after the instructions', () => {
    const item = compactionItem('Hello is in a.txt. Next: patch it.');
    const { request, dropped } = requestToChat(
      parseResponsesRequest({
        model: 'm',
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are an agent.' }] },
          item,
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go on.' }] },
        ],
      }),
      'up',
      NONE,
    );
    expect((request.messages as Json[]).map((m) => [m.role, m.content])).to.deep.equal([
      ['developer', 'You are an agent.'],
      ['user', `${SUMMARY_INTRO}Hello is in a.txt. Next: patch it.`],
      ['user', [{ type: 'text', text: 'Go on.' }]],
    ]);
    expect(dropped).to.deep.equal([]);
  });

  it('drops and names a provider’s own compaction item (its encrypted content means nothing to another provider)', () => {
    const { request, dropped } = requestToChat(
      parseResponsesRequest({
        model: 'm',
        input: [
          { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAB-opaque' },
          { type: 'message', role: 'user', content: 'hi' },
        ],
      }),
      'up',
      NONE,
    );
    expect(request.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
    expect(dropped).to.deep.equal(['input[compaction]']);
  });

  it('keeps a summary’s text exactly, non-ASCII included', () => {
    const text = 'Résumé: 文件 a.txt — "quoted" \\ back\nnew line';
    expect(summaryOf(compactionItem(text))).to.equal(text);
  });

  it('asks for nothing when the trigger is not the last item: dropped and named, the answer an ordinary one', () => {
    const body = { ...COMPACT_REQUEST, input: [{ type: 'compaction_trigger' }, { type: 'message', role: 'user', content: 'hi' }] };
    const { request, dropped } = requestToChat(parseResponsesRequest(body), 'up', NONE);
    expect(request.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
    expect(request.tool_choice).to.equal('auto');
    expect(dropped).to.include('input[compaction_trigger]');
    expect(responsesCall('tg/gpt-direct', parseResponsesRequest(body)).compaction).to.equal(false);
  });
});
