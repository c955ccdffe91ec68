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
  /** What the provider's answer held that the client's format cannot carry (e.g. `reasoning_content`), each once: for the access log. */
  dropped(): string[];
  /**
   * A translator whose client side is Chat (provider → Chat) may offer its
   * stream as Chat chunk objects: each chunk it would write is handed to
   * `sink` as `JSON.parse` of its `data:` line would give it (`'[DONE]'` for
   * the last). Called before any `push`; the returned stream then replaces
   * `push` and `end`. Two hops (chain.ts) use it so the Chat between them is
   * never written out and read back.
   */
  chatChunks?: (sink: (chunk: unknown) => void) => ChatChunkStream;
  /**
   * A translator whose provider side is Chat (Chat → client) may take that
   * stream as Chat chunk objects (what `chatChunks` hands out) instead of
   * bytes; the reader replaces `push`, `end` and `fail`.
   */
  fromChatChunks?: () => ChatChunkReader;
  /**
   * A translator whose client side is Chat may give a whole answer as the
   * Chat completion object (what `JSON.parse` of `json(body)` would give),
   * so two hops never write the middle answer out and read it back.
   */
  chatJson?: (body: Buffer) => unknown;
  /** A translator whose provider side is Chat may take that object in place of the Chat completion's bytes (`json`). */
  fromChatJson?: (completion: unknown) => Buffer;
}

/** A provider's stream read as bytes, its Chat chunks handed on as objects (see `AnswerTranslator.chatChunks`). */
export interface ChatChunkStream {
  push(chunk: Buffer): void;
  end(): void;
}

/** Chat chunk objects in, the client's bytes out (see `AnswerTranslator.fromChatChunks`). */
export interface ChatChunkReader {
  /** One parsed Chat chunk, or `'[DONE]'`. */
  chunk(chunk: unknown): void;
  end(): void;
  fail(message: string): void;
  /** The client's bytes written since the last take. */
  take(): Buffer;
}

/** What a request translation needs to know beyond the call and the model entry. */
export interface TranslateOptions {
  /**
   * The model entry says `reasoning: true`: its provider takes a reasoning
   * control, so Messages `thinking`/`output_config.effort` and Chat
   * `reasoning_effort` map to each other; otherwise they are dropped.
   */
  reasoning?: boolean;
  /** The features the client's `anthropic-beta` header names (see betas.ts); those the translation cannot keep are dropped. */
  betas?: readonly string[];
  /**
   * The provider at the end of the chain runs web searches itself (a
   * Messages provider, reached from Responses through Chat): a Responses
   * `web_search` tool becomes Chat's `web_search_options` rather than dropped.
   */
  webSearch?: boolean;
  /**
   * The client's API answers a conversation that ends on the assistant with
   * a new assistant turn (Responses). A Messages provider would continue
   * that turn instead (a prefill), so a user turn asking to continue is
   * added there. Unset, a Chat client's final assistant turn stays a prefill.
   */
  newTurn?: boolean;
}

/**
 * A translated request and the names of what the client asked for that the
 * provider will not see, in the order met, each once (`thinking`,
 * `metadata.foo`, `cache_control`, `anthropic-beta:<feature>`,
 * `tools[<type>]`, …): what the `x-tollgate-dropped` header and the access
 * log list.
 */
export interface Translation {
  request: Record<string, unknown>;
  dropped: string[];
}

/** One direction of translation: a client's format to a provider that lacks it. */
export interface Translator {
  /**
   * The client's checked call → the provider's request body, `model` set to
   * the upstream model, and the names it dropped. Throws an `invalid_input`
   * AppError naming the field only when the call asks for something whose
   * loss would change what the client relies on.
   */
  translate(call: ParsedCall, model: ModelConfig, options?: TranslateOptions): Translation;
  /**
   * `translate(…).request` with the options the model entry gives (its
   * `reasoning` flag, no betas): the request alone, for callers that do not
   * report drops yet.
   */
  request(call: ParsedCall, model: ModelConfig): Record<string, unknown>;
  /** A fresh answer translator for this call; `alias` is what the client's answer names as its model. */
  answer(call: ParsedCall): AnswerTranslator;
}

/**
 * A non-Chat format's two mappings with Chat Completions, the pivot every
 * translation goes through: one folder per format (wire/<format>/, its translation.ts).
 */
export interface FormatTranslation {
  /** A Chat client's call → a provider that speaks this format (and its answers back into Chat). */
  fromChat: Translator;
  /** A client of this format → a Chat provider (and its answers back into this format). */
  toChat: Translator;
}
