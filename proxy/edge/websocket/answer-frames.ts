import type { OutgoingHttpHeaders } from 'node:http';
import type { AnswerSink } from './frame-call.js';

/** What a frame's answer produced once it is over: the response's id and output items, for the next frame's `previous_response_id`. */
export interface FrameResult {
  status: number;
  responseId: string | undefined;
  output: unknown[];
  completed: boolean;
}

/** The answer headers an error frame repeats (Codex reads `retry-after` and the rate-limit headers from them). */
const ERROR_HEADERS = /^(retry-after|x-request-id|x-ratelimit-|x-tollgate-)/;

/** Events whose payload the socket reads for the conversation (the text deltas, and the rest, are sent on unread). */
const ITEM_DONE = '"response.output_item.done"';
const ENDED = ['"response.completed"', '"response.incomplete"'];
/** The response's id where every stream seen puts it, first in `response` (read without parsing the whole response). */
const RESPONSE_ID = /^\{"type":"response\.(?:completed|incomplete)",(?:"sequence_number":\d+,)?"response":\{"id":"([^"\\]+)"/;
const LF = 0x0a;
const DONE = Buffer.from('[DONE]');

/**
 * A frame call's answer as WebSocket text frames: each server-sent event's
 * data, its bytes as they came, one frame each (the same events the HTTP
 * stream carries); an error answer as one `{"type":"error","status",…}`
 * frame, the shape Codex reads a refused turn from. Only the events the
 * conversation needs are decoded; the rest are never turned into strings.
 */
export class AnswerFrames implements AnswerSink {
  private status = 200;
  private headers: OutgoingHttpHeaders = {};
  private eventStream = false;
  /** An event not yet whole at the end of the last chunk. */
  private rest: Buffer | undefined;
  /** Set once the stream has shown a carriage return: events may then end in `\r\n\r\n`. */
  private crlf = false;
  private whole: Buffer[] = [];
  private readonly result: FrameResult = { status: 200, responseId: undefined, output: [], completed: false };

  /**
   * `send` takes the frames of one chunk of the answer together (they go out
   * in one write) and says false when the socket's buffer is over its mark.
   */
  constructor(
    private readonly send: (payloads: Buffer[]) => boolean,
    private readonly done: (result: FrameResult) => void,
  ) {}

  head(status: number, headers: OutgoingHttpHeaders): void {
    this.status = status;
    this.result.status = status;
    this.headers = headers;
    this.eventStream = status < 300 && String(headers['content-type'] ?? '').includes('text/event-stream');
  }

  chunk(data: Buffer): boolean {
    if (!this.eventStream) {
      this.whole.push(data);
      return true;
    }
    const buf = this.rest ? Buffer.concat([this.rest, data]) : data;
    this.crlf ||= buf.includes(0x0d);
    const payloads: Buffer[] = [];
    let start = 0;
    for (let end = this.blankLine(buf, start); end; end = this.blankLine(buf, start)) {
      const payload = dataOf(buf.subarray(start, end[0]));
      start = end[1];
      if (payload === undefined || payload.equals(DONE)) continue;
      this.read(payload);
      payloads.push(payload);
    }
    this.rest = start < buf.length ? Buffer.from(buf.subarray(start)) : undefined;
    return payloads.length ? this.send(payloads) : true;
  }

  end(): void {
    if (!this.eventStream) this.endWhole(Buffer.concat(this.whole).toString('utf8'));
    this.done(this.result);
  }

  /** Where the next event ends (the blank line after it): its end and where the next begins. */
  private blankLine(buf: Buffer, from: number): [number, number] | undefined {
    const lf = buf.indexOf('\n\n', from);
    const crlf = this.crlf ? buf.indexOf('\r\n\r\n', from) : -1;
    if (crlf >= 0 && (lf < 0 || crlf < lf)) return [crlf, crlf + 4];
    return lf >= 0 ? [lf, lf + 2] : undefined;
  }

  private read(payload: Buffer): void {
    if (payload.includes(ITEM_DONE)) {
      const item = (parsed(payload.toString('utf8')) as { type?: unknown; item?: unknown } | undefined) ?? {};
      if (item.type === 'response.output_item.done' && item.item !== undefined) this.result.output.push(item.item);
      return;
    }
    if (!ENDED.some((e) => payload.includes(e))) return;
    const text = payload.toString('utf8');
    const id = RESPONSE_ID.exec(text)?.[1] ?? (parsed(text) as { response?: { id?: unknown } } | undefined)?.response?.id;
    if (typeof id !== 'string') return;
    this.result.responseId = id;
    this.result.completed = true;
  }

  /** A whole JSON answer: an error becomes the error frame; a response (a client that asked for no stream) its `response.completed`. */
  private endWhole(text: string): void {
    const body = parsed(text) as { error?: unknown; id?: unknown; output?: unknown } | undefined;
    if (this.status < 300 && body && typeof body.id === 'string') {
      this.result.responseId = body.id;
      this.result.completed = true;
      if (Array.isArray(body.output)) this.result.output.push(...(body.output as unknown[]));
      this.send([Buffer.from(`{"type":"response.completed","response":${text}}`)]);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.headers)) if (ERROR_HEADERS.test(name) && value !== undefined) headers[name] = String(value);
    const error = body?.error ?? { type: 'api_error', message: 'The model provider answered with an error.' };
    this.send([Buffer.from(JSON.stringify({ type: 'error', status: this.status, error, headers }))]);
  }
}

/** An event block's data (its `data:` lines joined), undefined when it has none. */
function dataOf(block: Buffer): Buffer | undefined {
  // The usual block: at most an `event:` line, then one `data: ` line, the last.
  const at = block.indexOf('data: ') === 0 ? 0 : block.indexOf('\ndata: ') + 1;
  if (at > 0 || block.indexOf('data: ') === 0) {
    const from = at + 6;
    const nl = block.indexOf(LF, from);
    if (nl < 0) return block.subarray(from, block[block.length - 1] === 0x0d ? block.length - 1 : block.length);
  }
  let data: string | undefined;
  for (const line of block.toString('utf8').split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data === undefined ? undefined : Buffer.from(data);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
