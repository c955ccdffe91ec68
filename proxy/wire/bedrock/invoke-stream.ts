import { createParser, type EventSourceParser } from 'eventsource-parser';
import { isObject } from '../../../shared/json.js';
import {
  createEventStreamReader,
  createEventStreamWriter,
  MalformedEventStream,
  type EventStreamMessage,
  type EventStreamWriter,
} from './event-stream.js';

/**
 * Bedrock's InvokeModelWithResponseStream for Anthropic models: the
 * Messages stream's events, each the payload of one event-stream message
 * (`:event-type: chunk`, body `{"bytes": base64(the event's JSON)}`), and
 * failures as exception messages (`:message-type: exception`,
 * `:exception-type`, body `{"message"}`). The decoder turns such an
 * answer into the Messages SSE the proxy meters and relays; the encoder
 * turns a Messages SSE answer into it for a client that called the Bedrock
 * route.
 */

/** A Bedrock stream exception and the Messages error type a client of that format knows it as. */
const EXCEPTION_TO_MESSAGES: Record<string, string> = {
  throttlingException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error',
  validationException: 'invalid_request_error',
  modelStreamErrorException: 'api_error',
  modelTimeoutException: 'api_error',
  internalServerException: 'api_error',
};

const MESSAGES_TO_EXCEPTION: Record<string, string> = {
  rate_limit_error: 'throttlingException',
  overloaded_error: 'serviceUnavailableException',
  invalid_request_error: 'validationException',
  request_too_large: 'validationException',
};

function sse(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

function messageText(body: Uint8Array): string {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedEventStream(`${what} is not JSON`);
  }
  if (!isObject(value)) throw new MalformedEventStream(`${what} is not a JSON object`);
  return value;
}

/** A `chunk` message → its Messages event, as SSE. */
function chunkEvent(m: EventStreamMessage): string {
  const payload = parseObject(messageText(m.body), 'a chunk');
  if (typeof payload.bytes !== 'string') throw new MalformedEventStream('a chunk without bytes');
  const data = Buffer.from(payload.bytes, 'base64').toString('utf8');
  const event = parseObject(data, "a chunk's event");
  if (typeof event.type !== 'string') throw new MalformedEventStream("a chunk's event without a type");
  return sse(event.type, data);
}

/** An exception or error message → a Messages `error` event, the way an Anthropic stream reports a failure after its head. */
function failureEvent(m: EventStreamMessage): string {
  const exception = m.headers[':exception-type'] ?? m.headers[':error-code'] ?? 'internalServerException';
  let message = m.headers[':error-message'] ?? `Bedrock reported ${exception}.`;
  if (m.headers[':message-type'] === 'exception') {
    const body = parseObject(messageText(m.body), 'an exception');
    if (typeof body.message === 'string') message = body.message;
  }
  const type = EXCEPTION_TO_MESSAGES[exception] ?? 'api_error';
  return sse('error', JSON.stringify({ type: 'error', error: { type, message } }));
}

export interface InvokeStreamDecoder {
  /** The Messages SSE text of the events this chunk completes; throws `MalformedEventStream`. */
  push(chunk: Uint8Array): string;
  /** Throws `MalformedEventStream` when the stream stopped inside a message. */
  end(): void;
}

export function createInvokeStreamDecoder(): InvokeStreamDecoder {
  const reader = createEventStreamReader();
  return {
    push(chunk) {
      let out = '';
      for (const m of reader.push(chunk)) {
        const kind = m.headers[':message-type'];
        if (kind === 'event') {
          if (m.headers[':event-type'] === 'chunk') out += chunkEvent(m);
        } else if (kind === 'exception' || kind === 'error') out += failureEvent(m);
        else throw new MalformedEventStream(`a message of type ${kind ?? '(none)'}`);
      }
      return out;
    },
    end: () => reader.end(),
  };
}

export interface InvokeStreamEncoder {
  /** The event-stream messages of the Messages events this SSE text completes (bytes may cut a character: it is kept for the next). */
  push(sse: string | Uint8Array): Buffer;
}

/**
 * A Messages SSE answer → Bedrock's event stream, message for message; an
 * `error` event becomes the exception Bedrock would send for it.
 */
export function createInvokeStreamEncoder(): InvokeStreamEncoder {
  const writer = createEventStreamWriter();
  let out: Buffer[] = [];
  const parser: EventSourceParser = createParser({
    onEvent(e) {
      if (e.event === 'error') {
        out.push(exceptionMessage(writer, e.data));
        return;
      }
      const body = JSON.stringify({ bytes: Buffer.from(e.data, 'utf8').toString('base64') });
      out.push(writer.message({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(body)));
    },
  });
  const text = new TextDecoder();
  return {
    push(sse) {
      parser.feed(typeof sse === 'string' ? sse : text.decode(sse, { stream: true }));
      const done = out.length === 1 ? out[0]! : Buffer.concat(out);
      out = [];
      return done;
    },
  };
}

function exceptionMessage(writer: EventStreamWriter, data: string): Buffer {
  let type = 'api_error';
  let message = 'The model provider failed.';
  try {
    const parsed = JSON.parse(data) as unknown;
    const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
    if (typeof error?.type === 'string') type = error.type;
    if (typeof error?.message === 'string') message = error.message;
  } catch {
    /* an error event that is not JSON still ends the stream as an exception */
  }
  const exception = MESSAGES_TO_EXCEPTION[type] ?? 'internalServerException';
  return writer.message(
    { ':exception-type': exception, ':content-type': 'application/json', ':message-type': 'exception' },
    Buffer.from(JSON.stringify({ message })),
  );
}
