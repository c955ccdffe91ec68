/** Anthropic Messages answers, in the shape and event order the real API sends. */
import { argumentPieces, type PlannedCall } from './tools.js';
import { tokenPiece, tokenText, type OutputPlan } from './usage.js';

export interface Message {
  id: string;
  model: string;
  inputTokens: number;
  /** Prompt tokens read from and written to the cache (beside `inputTokens`), and server-side web searches. */
  cache: { read: number; write5m: number; write1h: number; split: boolean };
  webSearches: number;
  output: OutputPlan;
  /** Tool calls to answer with instead of text, each with its `toolu_` id. */
  toolCalls: (PlannedCall & { id: string })[];
}

function stopReason(m: Message): string {
  if (m.toolCalls.length) return 'tool_use';
  if (m.output.capped) return 'max_tokens';
  return m.output.stopSequence === undefined ? 'end_turn' : 'stop_sequence';
}

function stopSequence(m: Message): string {
  return m.toolCalls.length || m.output.stopSequence === undefined ? 'null' : JSON.stringify(m.output.stopSequence);
}

function toolUse(call: Message['toolCalls'][number], input: unknown): string {
  return `{"type":"tool_use","id":"${call.id}","name":${JSON.stringify(call.name)},"input":${JSON.stringify(input)}}`;
}

/** The prompt's counts as Anthropic gives them: the uncached rest, cache writes (with their split) and reads. */
function promptUsage(m: Message): string {
  const c = m.cache;
  const split = c.split ? `"cache_creation":{"ephemeral_5m_input_tokens":${c.write5m},"ephemeral_1h_input_tokens":${c.write1h}},` : '';
  return `"input_tokens":${m.inputTokens},"cache_creation_input_tokens":${c.write5m + c.write1h},"cache_read_input_tokens":${c.read},${split}`;
}

function searchUsage(m: Message): string {
  return m.webSearches ? `,"server_tool_use":{"web_search_requests":${m.webSearches}}` : '';
}

function usageJson(m: Message, outputTokens: number): string {
  return `{${promptUsage(m)}"output_tokens":${outputTokens}${searchUsage(m)}}`;
}

export function messageJson(m: Message): string {
  return (
    `{"id":"${m.id}","type":"message","role":"assistant","model":${JSON.stringify(m.model)},` +
    `"content":[${m.toolCalls.length ? m.toolCalls.map((c) => toolUse(c, c.input)).join(',') : `{"type":"text","text":"${tokenText(m.output.tokens)}"}`}],` +
    `"stop_reason":"${stopReason(m)}","stop_sequence":${stopSequence(m)},"usage":${usageJson(m, m.output.tokens)}}`
  );
}

function frame(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}

const BLOCK_START = frame('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}');
const PING = frame('ping', '{"type": "ping"}');
const BLOCK_STOP = frame('content_block_stop', '{"type":"content_block_stop","index":0}');
const MESSAGE_STOP = frame('message_stop', '{"type":"message_stop"}');

// Token deltas carry nothing request-specific, so they are built once and shared.
const deltaCache: string[] = [];
function deltaFrame(index: number): string {
  let cached = deltaCache[index];
  if (cached === undefined) {
    cached = frame('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${tokenPiece(index)}"}}`);
    if (index < 100_000) deltaCache[index] = cached;
  }
  return cached;
}

/** Every SSE frame of the streamed answer, in order; each is written on its own. */
export function messageFrames(m: Message): string[] {
  const frames: string[] = [
    frame(
      'message_start',
      `{"type":"message_start","message":{"id":"${m.id}","type":"message","role":"assistant",` +
        `"model":${JSON.stringify(m.model)},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{${promptUsage(m)}"output_tokens":1}}}`,
    ),
  ];
  if (m.toolCalls.length) frames.push(PING, ...toolFrames(m));
  else {
    frames.push(BLOCK_START, PING);
    for (let i = 1; i <= m.output.tokens; i++) frames.push(deltaFrame(i));
    frames.push(BLOCK_STOP);
  }
  frames.push(
    frame(
      'message_delta',
      `{"type":"message_delta","delta":{"stop_reason":"${stopReason(m)}","stop_sequence":${stopSequence(m)}},"usage":{"output_tokens":${m.output.tokens}${searchUsage(m)}}}`,
    ),
    MESSAGE_STOP,
  );
  return frames;
}

/** One tool_use block per call, its input streamed as input_json_delta fragments. */
function toolFrames(m: Message): string[] {
  const frames: string[] = [];
  m.toolCalls.forEach((call, index) => {
    frames.push(frame('content_block_start', `{"type":"content_block_start","index":${index},"content_block":${toolUse(call, {})}}`));
    for (const piece of argumentPieces(call.input)) {
      frames.push(
        frame(
          'content_block_delta',
          `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(piece)}}}`,
        ),
      );
    }
    frames.push(frame('content_block_stop', `{"type":"content_block_stop","index":${index}}`));
  });
  return frames;
}
