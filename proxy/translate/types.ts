import type { ModelConfig } from '../../shared/models.js';
import type { ParsedCall } from '../call.js';

/**
 * Turns one answer of the provider, in the provider's format, into the
 * client's format. Made per call; fed as the provider's bytes arrive, so
 * nothing is buffered beyond the current SSE event (a whole JSON answer is
 * the one exception: it is translated when complete).
 */
export interface AnswerTranslator {
  /** A whole non-streamed success answer → the client's body. */
  json(body: Buffer): Buffer;
  /** Streamed bytes from the provider → bytes for the client (empty when no whole event is ready). */
  push(chunk: Buffer): Buffer;
  /** The provider's stream ended → whatever the client's format still needs (e.g. `data: [DONE]`). */
  end(): Buffer;
  /** The provider's stream broke after it started → an error event in the client's format. */
  fail(message: string): Buffer;
  /** The provider's error answer (status ≥ 300, body as sent) → the client's error body, same status. */
  error(status: number, body: Buffer): Buffer;
}

/** One direction of translation: a client's format to a provider that lacks it. */
export interface Translator {
  /**
   * The client's checked call → the provider's request body, `model` set to
   * the upstream model. Throws an `invalid_input` AppError naming the field
   * when the call asks for something the provider's format cannot express.
   */
  request(call: ParsedCall, model: ModelConfig): Record<string, unknown>;
  /** A fresh answer translator for this call; `alias` is what the client's answer names as its model. */
  answer(call: ParsedCall): AnswerTranslator;
}

/**
 * A non-Chat format's two mappings with Chat Completions, the pivot every
 * translation goes through: one folder per format (translate/<format>/).
 */
export interface FormatTranslation {
  /** A Chat client's call → a provider that speaks this format (and its answers back into Chat). */
  fromChat: Translator;
  /** A client of this format → a Chat provider (and its answers back into this format). */
  toChat: Translator;
}
