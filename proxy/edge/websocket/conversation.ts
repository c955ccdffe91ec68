import { randomBytes } from 'node:crypto';
import { invalidInput } from '../../../shared/errors.js';
import type { FrameResult } from './answer-frames.js';

/**
 * The connection's last response, as OpenAI's WebSocket keeps it: a frame
 * whose `previous_response_id` names it sends only the items after it (Codex
 * does so on every turn after the first of a connection, with `store: false`,
 * so no provider holds it). The items are the full input that response saw
 * and the output it gave.
 */
interface Last {
  id: string;
  items: unknown[];
}

/** One `response.create` frame, ready for the edge: its body, and the full input to remember once it is answered. */
export interface CreateFrame {
  body: Buffer;
  input: unknown[];
}

/** A frame Codex sends that asks for no model call: the prewarm (`generate: false`), or an acknowledgement. */
export type Frame = { kind: 'create'; create: CreateFrame } | { kind: 'prewarm'; input: unknown[]; model: unknown } | { kind: 'ignored' };

const asItems = (input: unknown): unknown[] => {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (Array.isArray(input)) return input as unknown[];
  throw invalidInput('input: must be a string or an array of items.');
};

export class Conversation {
  private last: Last | undefined;

  /** The frame read (a 400 when it is not a request this transport serves). */
  read(text: string): Frame {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      throw invalidInput('The frame is not JSON.');
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) throw invalidInput('The frame must be a JSON object.');
    const { type, generate, ...request } = frame as Record<string, unknown>;
    // Codex acknowledges each response it has read; nothing is owed for it.
    if (type === 'response.processed') return { kind: 'ignored' };
    if (type !== 'response.create') throw invalidInput(`type: "${String(type)}" is not a request this socket serves; send "response.create".`);
    let input = asItems(request.input);
    if (typeof request.previous_response_id === 'string' && request.previous_response_id === this.last?.id) {
      input = [...this.last.items, ...input];
      delete request.previous_response_id;
    }
    if (generate === false) return { kind: 'prewarm', input, model: request.model };
    request.input = input;
    request.stream = true;
    return { kind: 'create', create: { body: Buffer.from(JSON.stringify(request)), input } };
  }

  /** The prewarm's answer, made here: nothing is generated, so nothing reaches a provider and nothing is billed. */
  prewarm(input: unknown[], model: unknown): string[] {
    const id = `resp_${randomBytes(16).toString('hex')}`;
    this.last = { id, items: input };
    const response = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, output: [] };
    const usage = {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    };
    return [
      JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } }),
      JSON.stringify({ type: 'response.completed', sequence_number: 1, response: { ...response, status: 'completed', usage } }),
    ];
  }

  /** A frame's answer is over: a completed response becomes the one the next frame may continue from. */
  answered(create: CreateFrame, result: FrameResult): void {
    if (result.completed && result.responseId) this.last = { id: result.responseId, items: [...create.input, ...result.output] };
  }
}
