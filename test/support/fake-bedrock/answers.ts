import { isObject } from '../../../shared/json.js';
import type { EventStreamWriter } from '../../../proxy/wire/bedrock/event-stream.js';
import { buildAnswer } from '../fake-upstream/answers.js';
import type { IdSource } from '../fake-upstream/ids.js';
import { planOutput, tokenPiece, tokenText } from '../fake-upstream/usage.js';

/**
 * Bedrock's answers: InvokeModel's (Anthropic's Messages answer, streamed
 * as chunk events of the binary event stream) and Converse's, with usage
 * reported the way each reports it.
 */

/** What one answer reports beside its text. */
export interface FakeBedrockUsage {
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** InvokeModel only: the 1-hour share of the writes, in Messages' `cache_creation` split. */
  cacheWrite1hTokens?: number;
  /** InvokeModel only: tool calls to answer with (by default text, or every tool offered). */
  tools?: 'none' | readonly { name: string; input: Record<string, unknown> }[];
}

export const DEFAULT_OUTPUT_TOKENS = 12;

/** SSE frames → the data of each, the Messages event's JSON. */
function eventData(frames: string[]): string[] {
  return frames.map((f) => /^data: (.*)$/m.exec(f)![1]!);
}

export function invokeAnswer(
  modelId: string,
  body: Record<string, unknown>,
  stream: boolean,
  ids: IdSource,
  usage: FakeBedrockUsage,
): { json: string } | { events: string[] } {
  const writes = usage.cacheWriteTokens ?? 0;
  const w1h = usage.cacheWrite1hTokens ?? 0;
  const answer = buildAnswer('messages', { ...body, model: modelId, stream }, usage.outputTokens ?? DEFAULT_OUTPUT_TOKENS, ids, {
    kind: 'ok',
    cacheReadTokens: usage.cacheReadTokens ?? 0,
    cacheWrite5mTokens: writes - w1h,
    cacheWrite1hTokens: w1h,
    ...(usage.tools ? { tools: usage.tools } : {}),
  });
  if (!answer.stream) return { json: answer.json };
  const events = eventData(answer.frames).filter((d) => !d.includes('"type": "ping"'));
  return { events: withInvocationMetrics(events) };
}

/** Bedrock adds its own counts to the closing `message_stop`. */
function withInvocationMetrics(events: string[]): string[] {
  let input = 0;
  let output = 0;
  for (const data of events) {
    const e = JSON.parse(data) as Record<string, unknown>;
    const usage = (e.type === 'message_start' && isObject(e.message) ? e.message.usage : e.usage) as Record<string, number> | undefined;
    if (usage?.input_tokens !== undefined) input = usage.input_tokens;
    if (usage?.output_tokens !== undefined) output = usage.output_tokens;
  }
  const last = events.length - 1;
  const stop = JSON.parse(events[last]!) as Record<string, unknown>;
  stop['amazon-bedrock-invocationMetrics'] = { inputTokenCount: input, outputTokenCount: output, invocationLatency: 5, firstByteLatency: 2 };
  return [...events.slice(0, last), JSON.stringify(stop)];
}

/** `invoke-with-response-stream`'s framing of one Messages event. */
export function chunkMessage(writer: EventStreamWriter, data: string): Buffer {
  const body = JSON.stringify({ bytes: Buffer.from(data).toString('base64'), p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ' });
  return writer.message({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(body));
}

export function exceptionMessage(writer: EventStreamWriter, exception: string, message: string): Buffer {
  return writer.message(
    { ':exception-type': exception, ':content-type': 'application/json', ':message-type': 'exception' },
    Buffer.from(JSON.stringify({ message })),
  );
}

/** Converse's counting: a quarter of the characters of every text block, at least one. */
function converseInputTokens(body: Record<string, unknown>): number {
  let chars = 0;
  const texts = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return;
    for (const b of blocks) if (isObject(b) && typeof b.text === 'string') chars += b.text.length;
  };
  texts(body.system);
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObject(m)) texts(m.content);
  return Math.max(1, Math.ceil(chars / 4));
}

export interface ConverseAnswer {
  text: string;
  pieces: string[];
  /** Set when tools were offered and the last turn holds no tool result: the first tool is called. */
  toolUse?: { toolUseId: string; name: string; input: Record<string, unknown> };
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  usage: Record<string, number>;
}

export function converseAnswer(body: Record<string, unknown>, usage: FakeBedrockUsage): ConverseAnswer {
  const config = isObject(body.inferenceConfig) ? body.inferenceConfig : {};
  const plan = planOutput(typeof config.maxTokens === 'number' ? config.maxTokens : undefined, usage.outputTokens ?? DEFAULT_OUTPUT_TOKENS);
  const inputTokens = converseInputTokens(body);
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const counts: Record<string, number> = { inputTokens, outputTokens: plan.tokens, totalTokens: inputTokens + plan.tokens + read + write };
  if (read || write) Object.assign(counts, { cacheReadInputTokens: read, cacheWriteInputTokens: write });
  const pieces = Array.from({ length: plan.tokens }, (_, i) => tokenPiece(i + 1));
  const answer: ConverseAnswer = { text: tokenText(plan.tokens), pieces, stopReason: plan.capped ? 'max_tokens' : 'end_turn', usage: counts };
  const tool = offeredTool(body);
  if (tool) Object.assign(answer, { toolUse: { toolUseId: 'tooluse_fake1', name: tool, input: { city: 'Paris' } }, stopReason: 'tool_use' });
  return answer;
}

/** The first offered tool's name, unless the conversation's last turn already answers a tool call. */
function offeredTool(body: Record<string, unknown>): string | undefined {
  const tools = isObject(body.toolConfig) && Array.isArray(body.toolConfig.tools) ? body.toolConfig.tools : [];
  const first: unknown = tools[0];
  const name = isObject(first) && isObject(first.toolSpec) ? first.toolSpec.name : undefined;
  const last: unknown = Array.isArray(body.messages) ? body.messages.at(-1) : undefined;
  const answered = isObject(last) && Array.isArray(last.content) && last.content.some((b) => isObject(b) && b.toolResult !== undefined);
  return typeof name === 'string' && !answered ? name : undefined;
}

export function converseJson(a: ConverseAnswer): string {
  return JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: a.text }, ...(a.toolUse ? [{ toolUse: a.toolUse }] : [])] } },
    stopReason: a.stopReason,
    usage: a.usage,
    metrics: { latencyMs: 5 },
  });
}

/** ConverseStream's events, each an event-stream message named by its `:event-type`. */
export function converseStreamMessages(writer: EventStreamWriter, a: ConverseAnswer): Buffer[] {
  const event = (type: string, payload: unknown) =>
    writer.message({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));
  return [
    event('messageStart', { role: 'assistant' }),
    ...a.pieces.map((text) => event('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
    event('contentBlockStop', { contentBlockIndex: 0 }),
    ...(a.toolUse
      ? [
          event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: a.toolUse.toolUseId, name: a.toolUse.name } } }),
          event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: JSON.stringify(a.toolUse.input) } } }),
          event('contentBlockStop', { contentBlockIndex: 1 }),
        ]
      : []),
    event('messageStop', { stopReason: a.stopReason }),
    event('metadata', { usage: a.usage, metrics: { latencyMs: 5 } }),
  ];
}
