import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Usage, WireFormat } from '../call.js';
import { WIRE } from './registry.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';

/**
 * Reads usage off a response on the side, never changing its bytes.
 * `usage()` is what the upstream reported (undefined if it did not), read
 * from the provider's own format, before any translation; `reportedSoFar()`
 * what a stream had reported before it was cut (the prompt's split) and
 * `outputSeen()` the generated text seen so far, for a stream cut short.
 */
export interface UsageTap {
  feed(chunk: Buffer): void;
  usage(): Usage | undefined;
  reportedSoFar(): Usage | undefined;
  outputSeen(): number;
  /** Why the answer ended (`stop`, `length`, `end_turn`, `tool_use`…), for traces; empty when not seen. */
  finishReasons(): string[];
}

type Json = Record<string, unknown>;

const MAX_BUFFERED_BODY = 8 * 1024 * 1024;

const USAGE_KEY = Buffer.from('"usage"');

/**
 * Where the answer's top-level `"usage": {…}` object lies, found from the
 * end without parsing the rest (an answer's text can be many kilobytes; its
 * usage is a few dozen bytes near the end in every format). Undefined when
 * that cannot be told for certain, and the caller parses the whole answer.
 *
 * The last `"usage"` not preceded by a backslash is a key (in valid JSON an
 * unescaped quote opens or closes a string, and a string closed right before
 * `usage"` would not be JSON). It is the top-level one only if, walking on
 * from its value, exactly one level closes before the end of the text: a
 * `usage` key inside a tool's input or a choice closes more than one.
 */
function topLevelUsageSpan(body: Buffer): [number, number] | undefined {
  const at = body.lastIndexOf(USAGE_KEY);
  if (at < 1 || body[at - 1] === BACKSLASH) return undefined;
  let i = at + USAGE_KEY.length;
  while (isJsonSpace(body[i])) i++;
  if (body[i] !== COLON) return undefined;
  i++;
  while (isJsonSpace(body[i])) i++;
  if (body[i] !== OPEN_BRACE) return undefined;
  const start = i;
  let end = -1;
  // Depth counted from inside the top-level object (1), so the usage object is 2.
  let depth = 1;
  for (; i < body.length; i++) {
    const c = body[i]!;
    if (c === QUOTE) i = stringEnd(body, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 1 && end < 0) end = i + 1;
      if (depth === 0) break;
    }
  }
  if (depth !== 0 || end < 0) return undefined;
  for (i++; i < body.length; i++) if (!isJsonSpace(body[i])) return undefined;
  return [start, end];
}

/**
 * A whole (non-streamed) JSON answer: keep a copy and read `usage` at the end.
 * A class rather than closures: one is made per call, and a class instance
 * allocates no per-call functions.
 */
class JsonTap implements UsageTap {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private parsed: Usage | undefined | null = null;
  private reasons: string[] | undefined;

  constructor(private readonly format: WireFormat) {}

  feed(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= MAX_BUFFERED_BODY) this.chunks.push(chunk);
  }

  /** Most answers arrive in one chunk: read it where it lies rather than copy it. */
  private whole(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }

  /** The whole answer parsed, or undefined when it is not JSON (or was cut short). */
  private parseWhole(whole: Buffer): Json | undefined {
    try {
      const body = JSON.parse(whole.toString('utf8')) as unknown;
      return body && typeof body === 'object' ? (body as Json) : undefined;
    } catch {
      return undefined;
    }
  }

  usage(): Usage | undefined {
    if (this.parsed !== null) return this.parsed;
    this.parsed = undefined;
    const whole = this.whole();
    const span = topLevelUsageSpan(whole);
    let u: unknown;
    if (span) {
      try {
        u = JSON.parse(whole.toString('utf8', span[0], span[1]));
      } catch {
        u = this.parseWhole(whole)?.usage;
      }
    } else u = this.parseWhole(whole)?.usage;
    if (u && typeof u === 'object' && !Array.isArray(u)) {
      this.parsed = WIRE[this.format].usage.fromAnswer(u as Json, whole, () => this.parseWhole(whole));
    }
    return this.parsed;
  }

  reportedSoFar(): Usage | undefined {
    return undefined;
  }

  outputSeen(): number {
    return 0;
  }

  /** Only traces ask for these, so only then is the whole answer parsed. */
  finishReasons(): string[] {
    if (!this.reasons) {
      const body = this.parseWhole(this.whole());
      this.reasons = body ? finishReasonsOf(body) : [];
    }
    return this.reasons;
  }
}

function finishReasonsOf(body: Json): string[] {
  if (typeof body.stop_reason === 'string') return [body.stop_reason];
  if (body.object === 'response' && typeof body.status === 'string') return [body.status];
  if (!Array.isArray(body.choices)) return [];
  return (body.choices as Json[]).map((c) => c.finish_reason).filter((r): r is string => typeof r === 'string');
}

/** A streamed answer: its SSE events parsed and handed to the format's stream reader. */
function sseTap(format: WireFormat): UsageTap {
  const reader = WIRE[format].usage.stream();
  const decoder = new TextDecoder();
  const parser: EventSourceParser = createParser({ onEvent: (e) => reader.event(e.data, e.event) });
  return {
    feed(chunk) {
      parser.feed(decoder.decode(chunk, { stream: true }));
    },
    usage: () => reader.usage(),
    reportedSoFar: () => reader.reportedSoFar(),
    outputSeen: () => reader.outputSeen(),
    finishReasons: () => reader.finishReasons(),
  };
}

export function createUsageTap(format: WireFormat, eventStream: boolean): UsageTap {
  return eventStream ? sseTap(format) : new JsonTap(format);
}
