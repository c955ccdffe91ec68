import { EventStreamCodec } from '@smithy/eventstream-codec';

/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`), the
 * framing of Bedrock's streamed answers: each message is a 12-byte prelude
 * (total length, headers length, CRC32), typed headers, a body and a CRC32
 * of the whole. Smithy's codec (the AWS SDKs') checks and builds single
 * messages; this file cuts a byte stream into them, however the network
 * split it.
 */

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** A message's string headers (the only kind Bedrock sends) and its body. */
export interface EventStreamMessage {
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The stream's bytes broke the framing or a checksum: the answer cannot be read on. */
export class MalformedEventStream extends Error {
  constructor(reason: string) {
    super(`Malformed event stream: ${reason}`);
    this.name = 'MalformedEventStream';
  }
}

const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = 16;
/** Larger than any message Bedrock sends (a chunk of one event); a length beyond it is a broken prelude, not a reason to buffer on. */
const MAX_MESSAGE_BYTES = 24 * 1024 * 1024;

function newCodec(): EventStreamCodec {
  return new EventStreamCodec(
    (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
    (text: string) => new Uint8Array(Buffer.from(text, 'utf8')),
  );
}

export interface EventStreamReader {
  /** The messages this chunk completes (none while one is still partial). */
  push(chunk: Uint8Array): EventStreamMessage[];
  /** The stream ended: a partial message left over is malformed. */
  end(): void;
}

export function createEventStreamReader(): EventStreamReader {
  const codec = newCodec();
  let pending: Buffer = Buffer.alloc(0);

  function decode(frame: Buffer): EventStreamMessage {
    let message;
    try {
      message = codec.decode(frame);
    } catch (err) {
      throw new MalformedEventStream(err instanceof Error ? err.message : 'undecodable message');
    }
    const headers: Record<string, string> = {};
    for (const [name, h] of Object.entries(message.headers)) if (h.type === 'string') headers[name] = h.value;
    return { headers, body: message.body };
  }

  return {
    push(chunk) {
      pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
      const out: EventStreamMessage[] = [];
      while (pending.length >= PRELUDE_BYTES) {
        const length = pending.readUInt32BE(0);
        if (length < MIN_MESSAGE_BYTES || length > MAX_MESSAGE_BYTES) throw new MalformedEventStream(`a message length of ${length} bytes`);
        if (pending.length < length) break;
        // A copy: the codec's views would otherwise pin the whole chunk.
        out.push(decode(Buffer.from(pending.subarray(0, length))));
        pending = pending.subarray(length);
      }
      return out;
    },
    end() {
      if (pending.length > 0) throw new MalformedEventStream(`${pending.length} bytes of an unfinished message at the end`);
    },
  };
}

export interface EventStreamWriter {
  /** One message, its headers all strings, framed and checksummed. */
  message(headers: Record<string, string>, body: Uint8Array): Buffer;
}

export function createEventStreamWriter(): EventStreamWriter {
  const codec = newCodec();
  return {
    message(headers, body) {
      const typed: Record<string, { type: 'string'; value: string }> = {};
      for (const [name, value] of Object.entries(headers)) typed[name] = { type: 'string', value };
      const bytes = codec.encode({ headers: typed, body });
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  };
}
