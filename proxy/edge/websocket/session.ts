import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { AppError, toAppError } from '../../../shared/errors.js';
import { errorBody } from '../../wire/errors.js';
import { tooLarge } from '../../wire/index.js';
import type { SocketKey } from './admit.js';
import { AnswerFrames } from './answer-frames.js';
import { Conversation, type CreateFrame } from './conversation.js';
import { frameCall } from './frame-call.js';
import { textFrames } from './text-frames.js';

/** Bytes a socket may have queued for its client before the provider's answer is no longer read on (back-pressure). */
export const HIGH_WATER_BYTES = 1024 * 1024;

const uncork = (raw: Duplex): void => void raw.uncork();

/** Where each frame's call goes: the edge's own handler, so a frame is served exactly as `POST /v1/responses` is. */
export type EdgeHandle = (req: IncomingMessage, res: ServerResponse) => void;

/** Counts each frame by what it was (the metrics). */
export type FrameCount = (kind: 'call' | 'prewarm' | 'refused') => void;

/**
 * One socket: its key, its conversation, and whether a call is in flight.
 * Frames are answered one at a time, as Codex sends them; a refused frame
 * is an error frame and the socket stays open for the next.
 */
export class SocketSession {
  readonly conversation = new Conversation();
  readonly openedAt: number;
  activeAt: number;
  busy = false;
  /** Set once it must close: it does when its call is answered. */
  private closing: { code: number; reason: string } | undefined;
  /**
   * Frames that came while a call was in flight: a client may send its next
   * turn as soon as it has read `response.completed`, before the call's bill
   * is settled. The socket is paused meanwhile, so only what one read held waits here.
   */
  private readonly queued: Buffer[] = [];

  constructor(
    readonly ws: WebSocket,
    /** The upgraded connection under `ws`: corked around a chunk's frames, its `drain` resumes the relay. */
    private readonly raw: Duplex,
    readonly key: SocketKey,
    private readonly path: string,
    private readonly headers: IncomingMessage['headers'],
    private readonly handle: EdgeHandle,
    private readonly count: FrameCount,
    private readonly now: () => number,
    private readonly maxBodyBytes: number,
  ) {
    this.openedAt = now();
    this.activeAt = this.openedAt;
  }

  /** Closes now when idle, else once the call in flight is answered. */
  close(code: number, reason: string): void {
    this.closing ??= { code, reason };
    if (!this.busy) this.ws.close(code, reason);
  }

  /** Closes now: a call in flight sees its client leave (and is billed for what it used). */
  cut(code: number, reason: string): void {
    this.closing = { code, reason };
    this.ws.close(code, reason);
  }

  onFrame(data: Buffer, isBinary: boolean): void {
    this.activeAt = this.now();
    if (this.closing) return;
    if (isBinary) return this.refuse(new AppError('invalid_input', 'Frames are JSON text.'));
    if (this.busy) {
      this.queued.push(data);
      this.ws.pause();
      return;
    }
    try {
      const frame = this.conversation.read(data.toString('utf8'));
      if (frame.kind === 'create') {
        // A frame is within the limit (the socket's maxPayload); the conversation it continues may not be.
        if (frame.create.body.length > this.maxBodyBytes) return this.refuse(tooLarge(this.maxBodyBytes));
        this.count('call');
        this.call(frame.create);
      } else if (frame.kind === 'prewarm') {
        this.count('prewarm');
        for (const text of this.conversation.prewarm(frame.input, frame.model)) this.ws.send(text);
      }
    } catch (err) {
      this.refuse(toAppError(err));
    }
  }

  /** The next frame that waited, once the edge has finished with the call before it. */
  private next(): void {
    const data = this.queued.shift();
    if (this.queued.length === 0) this.ws.resume();
    if (data && !this.busy) this.onFrame(data, false);
  }

  /** A frame refused before any call: the error frame Codex reads, the socket kept for the next frame. */
  private refuse(err: AppError): void {
    this.count('refused');
    const message = err.expose ? err.message : 'The proxy failed to handle this request.';
    const body = JSON.parse(errorBody('responses', err.kind, message, err.code)) as { error: unknown };
    this.ws.send(JSON.stringify({ type: 'error', status: err.status, error: body.error }));
  }

  /** The frame through the edge; its events go out as frames, the relay pausing while the socket's buffer is over its mark. */
  private call(create: CreateFrame): void {
    this.busy = true;
    const { ws, raw } = this;
    const frames = new AnswerFrames(
      (payloads) => {
        // Straight to the connection, in one write: with compression off, `ws` writes each message at once and
        // queues nothing, so frames written here keep their order with its own. None after its close frame.
        if (ws.readyState !== ws.OPEN) return true;
        // Corked until the tick ends, as Node's HTTP response does: the chunks one read of the provider's
        // answer holds go out in one vectored write, not a syscall each.
        if (!raw.writableCorked) {
          raw.cork();
          process.nextTick(uncork, raw);
        }
        raw.write(textFrames(payloads));
        if (raw.writableLength < HIGH_WATER_BYTES) return true;
        raw.once('drain', () => answer.emit('drain'));
        return false;
      },
      (result) => {
        this.conversation.answered(create, result);
        this.busy = false;
        this.activeAt = this.now();
        if (this.closing) ws.close(this.closing.code, this.closing.reason);
        else setImmediate(() => this.next());
      },
    );
    const { req, res, answer } = frameCall(this.path, this.headers, create.body, frames);
    // The socket going away is the client leaving: the relay reads on for the bill, as for an HTTP client.
    const gone = () => answer.destroy();
    ws.once('close', gone);
    answer.once('close', () => ws.off('close', gone));
    this.handle(req, res);
  }
}
