import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Usage, WireFormat } from '../call.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-bytes.js';

/**
 * Reads usage off a response on the side, never changing its bytes.
 * `usage()` is what the upstream reported (undefined if it did not);
 * `outputSeen()` counts generated text seen so far, for a stream cut short.
 */
export interface UsageTap {
  feed(chunk: Buffer): void;
  usage(): Usage | undefined;
  inputReported(): number | undefined;
  outputSeen(): number;
  /** Why the answer ended (`stop`, `length`, `end_turn`, `tool_use`…), for traces; empty when not seen. */
  finishReasons(): string[];
}

type Json = Record<string, unknown>;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** Anthropic counts cached prompt tokens separately; they are all input to bill. */
function anthropicInput(u: Json): number {
  return num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens);
}

const MAX_BUFFERED_BODY = 8 * 1024 * 1024;

const USAGE_KEY = Buffer.from('"usage"');

/**
 * Where the answer's top-level `"usage": {…}` object lies, found from the
 * end without parsing the rest (an answer's text can be many kilobytes; its
 * usage is a few dozen bytes near the end in both formats). Undefined when
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
    if (u && typeof u === 'object') {
      const o = u as Json;
      this.parsed =
        this.format === 'chat'
          ? { inputTokens: num(o.prompt_tokens), outputTokens: num(o.completion_tokens) }
          : { inputTokens: anthropicInput(o), outputTokens: num(o.output_tokens) };
    }
    return this.parsed;
  }

  inputReported(): number | undefined {
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
  if (!Array.isArray(body.choices)) return [];
  return (body.choices as Json[]).map((c) => c.finish_reason).filter((r): r is string => typeof r === 'string');
}

const FINISH_REASON = /"finish_reason":"([a-z_]+)"/;

function sseTap(format: WireFormat): UsageTap {
  let input: number | undefined;
  let output: number | undefined;
  let deltas = 0;
  const reasons: string[] = [];
  // Usage is final only once the chunk or event that closes the answer has come.
  let final = false;
  const decoder = new TextDecoder();
  const onData = (data: string, event: string | undefined): void => {
    if (format === 'chat') {
      if (data === '[DONE]') return;
      // Only the usage chunk needs parsing; every other chunk is one delta.
      if (!data.includes('"usage":{')) {
        deltas++;
        // Only the closing chunk of a choice names a reason: a byte search on the rest.
        if (data.includes('"finish_reason":"')) {
          const m = FINISH_REASON.exec(data);
          if (m) reasons.push(m[1]!);
        }
        return;
      }
      try {
        const u = (JSON.parse(data) as Json).usage as Json | null;
        if (u) {
          input = num(u.prompt_tokens);
          output = num(u.completion_tokens);
          final = true;
        }
      } catch {
        /* malformed chunk: ignore */
      }
      return;
    }
    if (event === 'content_block_delta') {
      deltas++;
      return;
    }
    if (event !== 'message_start' && event !== 'message_delta') return;
    try {
      const msg = JSON.parse(data) as Json;
      const stop = (msg.delta as Json | undefined)?.stop_reason;
      if (typeof stop === 'string') reasons.push(stop);
      const u = (event === 'message_start' ? (msg.message as Json | undefined)?.usage : msg.usage) as Json | undefined;
      if (!u) return;
      if (event === 'message_start' || u.input_tokens !== undefined) input = anthropicInput(u);
      // message_delta's output_tokens is cumulative: the last one is the total.
      if (u.output_tokens !== undefined) output = num(u.output_tokens);
      if (event === 'message_delta') final = true;
    } catch {
      /* malformed event: ignore */
    }
  };
  const parser: EventSourceParser = createParser({ onEvent: (e) => onData(e.data, e.event) });
  return {
    feed(chunk) {
      parser.feed(decoder.decode(chunk, { stream: true }));
    },
    usage: () => (final && input !== undefined && output !== undefined ? { inputTokens: input, outputTokens: output } : undefined),
    inputReported: () => input,
    outputSeen: () => Math.max(deltas, output ?? 0),
    finishReasons: () => reasons,
  };
}

export function createUsageTap(format: WireFormat, eventStream: boolean): UsageTap {
  return eventStream ? sseTap(format) : new JsonTap(format);
}

const EMPTY = Buffer.alloc(0);
const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');
const USAGE_OBJECT = Buffer.from('"usage":{');
const EMPTY_CHOICES = /"choices"\s*:\s*\[\s*\]/;

/** Only a frame holding a usage object is decoded and tested; every delta frame is a native byte search. */
function isUsageOnly(frame: Buffer): boolean {
  return frame.includes(USAGE_OBJECT) && EMPTY_CHOICES.test(frame.toString('utf8'));
}

/** Whether a chunk ends where an SSE frame does (a blank line). */
function endsFrame(chunk: Buffer): boolean {
  const n = chunk.length;
  return (
    n >= 2 && chunk[n - 1] === 0x0a && (chunk[n - 2] === 0x0a || (n >= 4 && chunk[n - 2] === 0x0d && chunk[n - 3] === 0x0a && chunk[n - 4] === 0x0d))
  );
}

/** The first blank line (LF LF or CRLF CRLF) at or after `from`, found natively. */
function frameEnd(buf: Buffer, from: number): { at: number; len: number } | undefined {
  const lf = buf.indexOf(LF_LF, from);
  const crlf = buf.indexOf(CRLF_CRLF, from);
  if (lf < 0 && crlf < 0) return undefined;
  return crlf < 0 || (lf >= 0 && lf < crlf) ? { at: lf, len: 2 } : { at: crlf, len: 4 };
}

/**
 * Drops the usage-only final chunk (`"choices":[]` with a usage object) that
 * the proxy asked for on the client's behalf; every other frame passes
 * byte-for-byte. Frames are cut at the blank line that ends an SSE event.
 */
export function createUsageChunkFilter(): { push(chunk: Buffer): Buffer; flush(): Buffer } {
  let pending = EMPTY;
  return {
    push(chunk) {
      // The usual chunk: whole frames, none with a usage object. It passes as it is, with no copy.
      if (!pending.length && endsFrame(chunk) && !chunk.includes(USAGE_OBJECT)) return chunk;
      const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out: Buffer[] = [];
      let start = 0;
      for (let b = frameEnd(buf, 0); b; b = frameEnd(buf, start)) {
        const frame = buf.subarray(start, b.at + b.len);
        if (!isUsageOnly(frame)) out.push(frame);
        start = b.at + b.len;
      }
      pending = start === buf.length ? EMPTY : Buffer.from(buf.subarray(start));
      return out.length === 1 ? out[0]! : Buffer.concat(out);
    },
    flush() {
      const rest = pending;
      pending = EMPTY;
      return rest.length && isUsageOnly(rest) ? EMPTY : rest;
    },
  };
}
