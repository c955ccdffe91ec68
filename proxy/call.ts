/**
 * The proxy's core types, shared by every part of a call: the wire formats
 * it speaks, a call once its format's checks passed, and the tokens an
 * answer used. Nothing here imports anything of the proxy, so every folder
 * can depend on it without an import circle.
 */

/** The wire formats a client may call in; a new format is one more member here (and its folders). */
export const WIRE_FORMATS = ['chat', 'messages', 'responses'] as const;

export type WireFormat = (typeof WIRE_FORMATS)[number];

/** A model call after its format's checks, the same shape for every format. */
export interface ParsedCall {
  alias: string;
  stream: boolean;
  /** The most output tokens the client allowed per choice, if it said. */
  maxTokens: number | undefined;
  /** Choices asked for (Chat Completions `n`): each may use maxTokens. */
  choices: number;
  body: Record<string, unknown>;
  /** The body as it came: forwarded as it is, but for the model, when nothing else changes. */
  raw: Buffer;
}

/** The tokens one answer used, as its provider reported them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}
