import type { Usage } from '../call.js';
import type { JsonObject } from '../../shared/json.js';

/** A token count as reported: anything but a positive finite number counts as none. */
export function tokens(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** One stream's usage, read event by event as the provider's SSE events arrive. */
export interface StreamUsage {
  /** One SSE event's data and name (Chat Completions names none). */
  event(data: string, name: string | undefined): void;
  usage(): Usage | undefined;
  inputReported(): number | undefined;
  outputSeen(): number;
  finishReasons(): string[];
}

/** How a wire format reports the tokens an answer used: one per format (formats/chat, formats/messages). */
export interface UsageReader {
  /** A whole answer's top-level `usage` object → the tokens it reports. */
  fromUsage(u: JsonObject): Usage;
  /** A fresh reader for one streamed answer. */
  stream(): StreamUsage;
}
