/** OpenAI Chat Completions answers, byte for byte in the shape the real API sends. */
import { argumentPieces, type PlannedCall } from './tools.js';
import { tokenPiece, tokenText, type OutputPlan } from './usage.js';

export interface Completion {
  id: string;
  created: number;
  model: string;
  inputTokens: number;
  /** Of `inputTokens`, those read from the cache (OpenAI counts them in the prompt). */
  cachedTokens: number;
  output: OutputPlan;
  /** Tool calls to answer with instead of text, each with its `call_` id. */
  toolCalls: (PlannedCall & { id: string })[];
}

const FINGERPRINT = 'fp_fake0001';

function usageJson(c: Completion): string {
  const total = c.inputTokens + c.output.tokens;
  return (
    `{"prompt_tokens":${c.inputTokens},"completion_tokens":${c.output.tokens},"total_tokens":${total},` +
    `"prompt_tokens_details":{"cached_tokens":${c.cachedTokens},"audio_tokens":0},` +
    '"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}'
  );
}

function finishReason(c: Completion): string {
  if (c.toolCalls.length) return 'tool_calls';
  return c.output.capped ? 'length' : 'stop';
}

/**
 * OpenAI does not say which stop sequence ended an answer; vLLM and other
 * OpenAI-compatible servers do, in the choice's `stop_reason`. The fake does
 * as they do, so a translating client can tell `stop_sequence` from `end_turn`.
 */
function matchedStop(c: Completion): string {
  return c.output.stopSequence === undefined ? '' : `,"stop_reason":${JSON.stringify(c.output.stopSequence)}`;
}

function toolCallJson(call: Completion['toolCalls'][number], index: number | undefined, args: string): string {
  const at = index === undefined ? '' : `"index":${index},`;
  return `{${at}"id":"${call.id}","type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":${JSON.stringify(args)}}}`;
}

function messageJson(c: Completion): string {
  if (c.toolCalls.length) {
    const calls = c.toolCalls.map((call) => toolCallJson(call, undefined, JSON.stringify(call.input))).join(',');
    return `{"role":"assistant","content":null,"tool_calls":[${calls}],"refusal":null,"annotations":[]}`;
  }
  return `{"role":"assistant","content":"${tokenText(c.output.tokens)}","refusal":null,"annotations":[]}`;
}

export function completionJson(c: Completion): string {
  return (
    `{"id":"${c.id}","object":"chat.completion","created":${c.created},"model":${JSON.stringify(c.model)},` +
    `"choices":[{"index":0,"message":${messageJson(c)},` +
    `"logprobs":null,"finish_reason":"${finishReason(c)}"${matchedStop(c)}}],` +
    `"usage":${usageJson(c)},"service_tier":"default","system_fingerprint":"${FINGERPRINT}"}`
  );
}

/** Each tool call as OpenAI streams it: its id and name with empty arguments, then the arguments in fragments. */
function toolCallDeltas(c: Completion): string[] {
  const deltas: string[] = [];
  c.toolCalls.forEach((call, index) => {
    const [first, ...rest] = argumentPieces(call.input);
    deltas.push(`{"tool_calls":[${toolCallJson(call, index, first!)}]}`);
    for (const piece of rest) deltas.push(`{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(piece)}}}]}`);
  });
  return deltas;
}

/** Every SSE frame of the streamed answer, in order; each is written on its own. */
export function completionFrames(c: Completion, includeUsage: boolean): string[] {
  const head =
    `data: {"id":"${c.id}","object":"chat.completion.chunk","created":${c.created},"model":${JSON.stringify(c.model)},` +
    `"service_tier":"default","system_fingerprint":"${FINGERPRINT}","choices":[`;
  const tail = includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  const chunk = (delta: string, finish: string) => `${head}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}${tail}`;
  const deltas = c.toolCalls.length
    ? ['{"role":"assistant","content":null,"refusal":null}', ...toolCallDeltas(c)]
    : [
        '{"role":"assistant","content":"","refusal":null}',
        ...Array.from({ length: c.output.tokens }, (_, i) => `{"content":"${tokenPiece(i + 1)}"}`),
      ];
  const frames = deltas.map((d) => chunk(d, 'null'));
  frames.push(`${head}{"index":0,"delta":{},"logprobs":null,"finish_reason":"${finishReason(c)}"${matchedStop(c)}}${tail}`);
  if (includeUsage) frames.push(`${head}],"usage":${usageJson(c)}}\n\n`);
  frames.push('data: [DONE]\n\n');
  return frames;
}
