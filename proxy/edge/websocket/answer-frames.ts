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

/** Events whose payload the socket reads for the conversation (the text deltas are sent on unread). */
const READ_EVENTS = /"type":\s*"response\.(created|completed|incomplete|failed|output_item\.done)"/;

/**
 * A frame call's answer as WebSocket text frames: each server-sent event's
 * data, as it came, one frame each (the same events the HTTP stream
 * carries); an error answer as one `{"type":"error","status",…}` frame,
 * the shape Codex reads a refused turn from.
 */
export class AnswerFrames implements AnswerSink {
  private status = 200;
  private headers: OutgoingHttpHeaders = {};
  private eventStream = false;
  private pending = '';
  private whole: Buffer[] = [];
  private readonly result: FrameResult = { status: 200, responseId: undefined, output: [], completed: false };

  /**
   * `send` takes the frames of one chunk of the answer together (they go out
   * in one write) and says false when the socket's buffer is over its mark.
   */
  constructor(
    private readonly send: (texts: string[]) => boolean,
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
    this.pending += data.toString('utf8');
    const texts: string[] = [];
    // Events end in a blank line: `\n\n` from every provider and translation seen, `\r\n\r\n` allowed.
    const crlf = this.pending.includes('\r');
    const next = () => (crlf ? this.pending.search(/\r?\n\r?\n/) : this.pending.indexOf('\n\n'));
    for (let cut = next(); cut >= 0; cut = next()) {
      const block = this.pending.slice(0, cut);
      this.pending = this.pending.slice(cut + (this.pending[cut] === '\r' ? 4 : 2));
      const data = dataOf(block);
      if (data === undefined || data === '[DONE]') continue;
      this.read(data);
      texts.push(data);
    }
    return texts.length ? this.send(texts) : true;
  }

  end(): void {
    if (!this.eventStream) this.endWhole(Buffer.concat(this.whole).toString('utf8'));
    this.done(this.result);
  }

  private read(data: string): void {
    if (!READ_EVENTS.test(data)) return;
    const event = parsed(data) as { type?: string; item?: unknown; response?: { id?: unknown } } | undefined;
    if (!event) return;
    if (typeof event.response?.id === 'string') this.result.responseId = event.response.id;
    if (event.type === 'response.output_item.done' && event.item !== undefined) this.result.output.push(event.item);
    if (event.type === 'response.completed' || event.type === 'response.incomplete') this.result.completed = true;
  }

  /** A whole JSON answer: an error becomes the error frame; a response (a client that asked for no stream) its `response.completed`. */
  private endWhole(text: string): void {
    const body = parsed(text) as { error?: unknown; id?: unknown; output?: unknown } | undefined;
    if (this.status < 300 && body && typeof body.id === 'string') {
      this.result.responseId = body.id;
      this.result.completed = true;
      if (Array.isArray(body.output)) this.result.output.push(...(body.output as unknown[]));
      this.send([`{"type":"response.completed","response":${text}}`]);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.headers)) if (ERROR_HEADERS.test(name) && value !== undefined) headers[name] = String(value);
    const error = body?.error ?? { type: 'api_error', message: 'The model provider answered with an error.' };
    this.send([JSON.stringify({ type: 'error', status: this.status, error, headers })]);
  }
}

/** An event block's data (its `data:` lines joined), undefined when it has none. */
function dataOf(block: string): string | undefined {
  let data: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
