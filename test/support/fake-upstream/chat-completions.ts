/** OpenAI Chat Completions answers, byte for byte in the shape the real API sends. */
import { tokenPiece, tokenText, type OutputPlan } from './usage.js';

export interface Completion {
  id: string;
  created: number;
  model: string;
  inputTokens: number;
  output: OutputPlan;
}

const FINGERPRINT = 'fp_fake0001';

function usageJson(c: Completion): string {
  const total = c.inputTokens + c.output.tokens;
  return `{"prompt_tokens":${c.inputTokens},"completion_tokens":${c.output.tokens},"total_tokens":${total},`
    + '"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},'
    + '"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}';
}

function finishReason(c: Completion): string {
  return c.output.capped ? 'length' : 'stop';
}

export function completionJson(c: Completion): string {
  return `{"id":"${c.id}","object":"chat.completion","created":${c.created},"model":${JSON.stringify(c.model)},`
    + `"choices":[{"index":0,"message":{"role":"assistant","content":"${tokenText(c.output.tokens)}","refusal":null,"annotations":[]},`
    + `"logprobs":null,"finish_reason":"${finishReason(c)}"}],`
    + `"usage":${usageJson(c)},"service_tier":"default","system_fingerprint":"${FINGERPRINT}"}`;
}

/** Every SSE frame of the streamed answer, in order; each is written on its own. */
export function completionFrames(c: Completion, includeUsage: boolean): string[] {
  const head = `data: {"id":"${c.id}","object":"chat.completion.chunk","created":${c.created},"model":${JSON.stringify(c.model)},`
    + `"service_tier":"default","system_fingerprint":"${FINGERPRINT}","choices":[`;
  const tail = includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  const frames: string[] = [
    `${head}{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}${tail}`,
  ];
  for (let i = 1; i <= c.output.tokens; i++) {
    frames.push(`${head}{"index":0,"delta":{"content":"${tokenPiece(i)}"},"logprobs":null,"finish_reason":null}${tail}`);
  }
  frames.push(`${head}{"index":0,"delta":{},"logprobs":null,"finish_reason":"${finishReason(c)}"}${tail}`);
  if (includeUsage) frames.push(`${head}],"usage":${usageJson(c)}}\n\n`);
  frames.push('data: [DONE]\n\n');
  return frames;
}
