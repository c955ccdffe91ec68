import { asChat, geminiPath } from './gemini.js';
import type { RecordedRequest } from './types.js';
import { countInputTokens } from './usage.js';

/** The input tokens the fake reports for a model request it recorded, whichever format it came in (Gemini's read as Chat's, as it answers it). */
export function recordedInputTokens(record: Pick<RecordedRequest, 'path' | 'body'>): number {
  const body = record.body as Record<string, unknown>;
  return countInputTokens(geminiPath(record.path) ? asChat(body) : body);
}
