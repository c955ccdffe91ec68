import { isObject } from '../../../shared/json.js';
/**
 * Deterministic token accounting, so tests can compute exact costs:
 * input = ceil(characters of every text in `messages` and `system` / 4), at least 1;
 * output = min(the request's token limit, the behaviour's outputTokens ?? 12).
 */

export const DEFAULT_OUTPUT_TOKENS = 12;

export interface OutputPlan {
  tokens: number;
  /** The request's limit cut the answer short: finish reason `length` / `max_tokens`. */
  capped: boolean;
  /** The request's stop sequence (`tokN` or ` tokN`) that ended the answer before token N: `stop_sequence`. */
  stopSequence?: string;
}

type Json = Record<string, unknown>;

/** A tool call's arguments as compact JSON, whichever format carried them (a string or an object). */
function argumentsLength(args: unknown): number {
  if (typeof args !== 'string') return JSON.stringify(args ?? {}).length;
  try {
    return JSON.stringify(JSON.parse(args)).length;
  } catch {
    return args.length;
  }
}

/** Text block types: Chat and Messages `text`, Responses `input_text` / `output_text`. */
const TEXT_BLOCKS = new Set(['text', 'input_text', 'output_text']);

/** A Responses input item: a message's content, a call's name and arguments, a tool output's text. */
function itemLength(item: Json): number {
  switch (item.type) {
    case 'function_call':
      return (typeof item.name === 'string' ? item.name.length : 0) + argumentsLength(item.arguments);
    case 'custom_tool_call':
      return (typeof item.name === 'string' ? item.name.length : 0) + argumentsLength(JSON.stringify({ input: item.input }));
    case 'function_call_output':
    case 'custom_tool_call_output':
      return textLength(item.output);
    case undefined:
    case 'message':
      return textLength(item.content);
    default:
      return 0;
  }
}

/** The characters of a content value: text, tool calls (name and arguments) and tool results, never JSON framing. */
function textLength(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const block of content) {
    if (!isObject(block)) continue;
    if (TEXT_BLOCKS.has(block.type as string) && typeof block.text === 'string') total += block.text.length;
    else if (block.type === 'tool_use' && typeof block.name === 'string') total += block.name.length + argumentsLength(block.input);
    else if (block.type === 'tool_result') total += textLength(block.content);
  }
  return total;
}

function messageLength(message: Json): number {
  let chars = textLength(message.content);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const fn = isObject(call) ? call.function : undefined;
      if (isObject(fn) && typeof fn.name === 'string') chars += fn.name.length + argumentsLength(fn.arguments);
    }
  }
  return chars;
}

/** A tool definition's name, description and parameter properties, the same in both formats. */
function toolLength(tool: unknown): number {
  if (!isObject(tool)) return 0;
  const def = isObject(tool.function) ? tool.function : tool;
  const schema = def.parameters ?? def.input_schema;
  const properties = isObject(schema) ? schema.properties : undefined;
  return (
    (typeof def.name === 'string' ? def.name.length : 0) +
    (typeof def.description === 'string' ? def.description.length : 0) +
    JSON.stringify(properties ?? {}).length
  );
}

/** Depends only on what the request says, not on which format says it: the same conversation costs the same in both. */
export function countInputTokens(body: Record<string, unknown>): number {
  let chars = textLength(body.system) + textLength(body.instructions);
  if (typeof body.input === 'string') chars += body.input.length;
  else if (Array.isArray(body.input)) for (const item of body.input) if (isObject(item)) chars += itemLength(item);
  if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) chars += messageLength(message);
  if (Array.isArray(body.tools)) for (const tool of body.tools) chars += toolLength(tool);
  return Math.max(1, Math.ceil(chars / 4));
}

/** The smallest of `max_tokens` / `max_completion_tokens` / `max_output_tokens` that the request gave, or undefined. */
export function requestTokenLimit(body: Record<string, unknown>): number | undefined {
  let limit: number | undefined;
  for (const value of [body.max_tokens, body.max_completion_tokens, body.max_output_tokens]) {
    if (typeof value === 'number' && (limit === undefined || value < limit)) limit = value;
  }
  return limit;
}

/** The stop sequences of either format (`stop_sequences`, or `stop` as a string or a list). */
export function requestStops(body: Record<string, unknown>): string[] {
  const stops = body.stop_sequences ?? body.stop;
  if (typeof stops === 'string') return [stops];
  return Array.isArray(stops) ? stops.filter((s): s is string => typeof s === 'string') : [];
}

export function planOutput(limit: number | undefined, wanted: number, stops: string[] = []): OutputPlan {
  let tokens = wanted;
  let stopSequence: string | undefined;
  // The answer is `tok1 tok2 …`: a stop sequence naming a word of it ends the text just before that word.
  for (const stop of stops) {
    const m = /^ ?tok([1-9][0-9]*)$/.exec(stop);
    if (m && Number(m[1]) <= tokens) {
      tokens = Number(m[1]) - 1;
      stopSequence = stop;
    }
  }
  if (limit !== undefined && limit < tokens) return { tokens: limit, capped: true };
  return stopSequence === undefined ? { tokens, capped: false } : { tokens, capped: false, stopSequence };
}

const textCache = new Map<number, string>();

/** `tok1 tok2 … tokN`: one token per word. */
export function tokenText(count: number): string {
  let text = textCache.get(count);
  if (text === undefined) {
    const words: string[] = [];
    for (let i = 1; i <= count; i++) words.push(`tok${i}`);
    text = words.join(' ');
    if (textCache.size < 10_000) textCache.set(count, text);
  }
  return text;
}

/** The i-th (1-based) token as it appears in a stream delta: words after the first carry their space. */
export function tokenPiece(index: number): string {
  return index === 1 ? 'tok1' : ` tok${index}`;
}
