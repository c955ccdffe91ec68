/**
 * The `streams` scenario's wire format: the ticking upstream stamps each
 * event with the moment it wrote it (`t<ns>` on the shared monotonic clock),
 * and the client reads the stamps back to time each event's trip.
 */

const MAX_EVENTS = 3_600;

/** The number of events a request asks for (its `max_tokens`, at most 3,600); 1 when it names none. */
export function eventsAsked(body: string): number {
  try {
    const n = (JSON.parse(body) as { max_tokens?: unknown }).max_tokens;
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? Math.min(n, MAX_EVENTS) : 1;
  } catch {
    return 1;
  }
}

const HEAD = 'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench-model","choices":[';

/** One event, stamped with `ns`: a Chat Completions chunk whose text is `t<ns> `. */
export function tickFrame(ns: bigint): string {
  return `${HEAD}{"index":0,"delta":{"content":"t${ns} "},"finish_reason":null}]}\n\n`;
}

/** The stream's end, as OpenAI sends it: the finish, a usage chunk, `[DONE]`. */
export function endFrames(events: number): string {
  return (
    `${HEAD}{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n` +
    `${HEAD}],"usage":{"prompt_tokens":200,"completion_tokens":${events * 2},"total_tokens":${200 + events * 2}}}\n\n` +
    'data: [DONE]\n\n'
  );
}

const STAMP = /"content":"t(\d+) /g;

/**
 * Reads a stream's chunks as they come and hands back the stamps of the
 * events completed so far; a frame (or a stamp) split across chunks is kept
 * until its end arrives.
 */
export class TickReader {
  private rest = '';

  /** The stamps (ns) of every frame this chunk completes. */
  read(chunk: string): bigint[] {
    const text = this.rest + chunk;
    const cut = text.lastIndexOf('\n\n');
    if (cut === -1) {
      this.rest = text;
      return [];
    }
    this.rest = text.slice(cut + 2);
    const stamps: bigint[] = [];
    for (const m of text.slice(0, cut).matchAll(STAMP)) stamps.push(BigInt(m[1]!));
    return stamps;
  }
}
