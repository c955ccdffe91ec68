/**
 * Random Messages answers for property tests, and the two ways a Messages
 * provider sends one: a whole JSON message, or its SSE events with text and
 * tool input cut into random pieces.
 */
import fc from 'fast-check';
import type { AnswerTranslator } from '../../proxy/translate/types.js';

type Json = Record<string, unknown>;

const id = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/);
const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
const jsonObject = fc.dictionary(name, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((o) => JSON.parse(JSON.stringify(o)) as Json);

const stopReason = fc.constantFrom('end_turn', 'stop_sequence', 'max_tokens', 'tool_use');
const usage = fc.record({
  input_tokens: fc.nat(100000),
  cache_creation_input_tokens: fc.nat(1000),
  cache_read_input_tokens: fc.nat(1000),
  output_tokens: fc.nat(100000),
});
export const messagesAnswer = fc.record({
  id: id.map((s) => `msg_${s}`),
  // A provider's text block is never empty (an empty one would stream no delta at all).
  text: fc.option(fc.string({ minLength: 1, maxLength: 30 }), { nil: undefined }),
  tools: fc.array(fc.record({ id: id.map((s) => `toolu_${s}`), name, input: jsonObject }), { maxLength: 3 }),
  stop_reason: stopReason,
  usage,
});
export type Answer = typeof messagesAnswer extends fc.Arbitrary<infer T> ? T : never;

export function contentOf(a: Answer): Json[] {
  return [
    ...(a.text === undefined ? [] : [{ type: 'text', text: a.text }]),
    ...a.tools.map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: t.input })),
  ];
}

export function messageJson(a: Answer): string {
  return JSON.stringify({
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: contentOf(a),
    stop_reason: a.stop_reason,
    stop_sequence: null,
    usage: a.usage,
  });
}

/** The events a Messages provider streams for this answer, text and tool input split into random pieces. */
export function messageEvents(a: Answer, cuts: number[]): string {
  const ev = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const pieces = (s: string) => {
    const out: string[] = [];
    let at = 0;
    for (const c of cuts) {
      const end = Math.min(s.length, at + 1 + (c % 7));
      out.push(s.slice(at, end));
      at = end;
      if (at >= s.length) break;
    }
    if (at < s.length) out.push(s.slice(at));
    return out;
  };
  let out = ev('message_start', {
    message: {
      id: a.id,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...a.usage, output_tokens: 1 },
    },
  });
  out += ev('ping', {});
  contentOf(a).forEach((block, index) => {
    if (block.type === 'text') {
      out += ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(block.text as string)) out += ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
    } else {
      out += ev('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const p of ['', ...pieces(JSON.stringify(block.input))])
        out += ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
    }
    out += ev('content_block_stop', { index });
  });
  out += ev('message_delta', { delta: { stop_reason: a.stop_reason, stop_sequence: null }, usage: { output_tokens: a.usage.output_tokens } });
  out += ev('message_stop', {});
  return out;
}

/** The answer's events fed to a translator in arbitrary pieces (some splitting a multi-byte character), then ended: all it wrote. */
export function streamThrough(t: AnswerTranslator, a: Answer, cuts: number[]): string {
  const bytes = Buffer.from(messageEvents(a, cuts));
  let out = '';
  let at = 0;
  for (const c of cuts) {
    const end = Math.min(bytes.length, at + 1 + c * 3);
    out += t.push(bytes.subarray(at, end)).toString();
    at = end;
  }
  return out + t.push(bytes.subarray(at)).toString() + t.end().toString();
}
