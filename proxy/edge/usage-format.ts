import type { UsageFormat } from '../call.js';
import { asksForCompaction } from '../wire/responses/compaction.js';
import type { CallState } from './steps/step.js';

/** What a call's usage record names it: embeddings, a Responses compaction (Codex's summaries, billed apart in usage), or the route's format. */
export function usageFormatOf(s: CallState): UsageFormat {
  if (s.route.action === 'embed') return 'embeddings';
  // Only the Responses format has the compact action, and an `input` that can end in a trigger.
  if (s.route.action === 'compact' || asksForCompaction(s.call?.body.input)) return 'compaction';
  return s.route.format;
}
