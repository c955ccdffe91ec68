/**
 * The proxy's core types, shared by every part of a call: the wire formats
 * it speaks (listed in shared/wire-formats.ts), a call once its format's checks passed, and the tokens an
 * answer used. Nothing here imports anything of the proxy, so every folder
 * can depend on it without an import circle.
 */

export type { UsageFormat, WireFormat } from '../shared/wire-formats.js';

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
  /**
   * Set for a large body parsed in a worker (proxy/body-work/): `body` is its
   * top level only, the conversation left out, and whatever needs the whole
   * body (the provider's request, a local token count) is made in a worker
   * from `raw` again.
   */
  partial?: boolean;
}

/**
 * The tokens and searches one answer used, as its provider reported them,
 * in a shape no format owns, so one price list prices them all. Every
 * prompt token is in exactly one of the first four fields: `inputTokens`
 * excludes cache reads and writes. `outputTokens` includes reasoning tokens
 * (billed as output), which `reasoningTokens` repeats for reports.
 */
export interface Usage {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  webSearchRequests: number;
}

/** A usage of only uncached input and output (an estimate, or a provider that reports nothing else). */
export function plainUsage(inputTokens: number, outputTokens: number): Usage {
  return { inputTokens, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens, reasoningTokens: 0, webSearchRequests: 0 };
}
