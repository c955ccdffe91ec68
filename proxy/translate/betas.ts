/**
 * The features a Messages client turns on with `anthropic-beta`
 * (comma-separated, possibly over several header lines), in the order given,
 * each once.
 */
export function anthropicBetas(header: string | readonly string[] | undefined): string[] {
  if (header === undefined) return [];
  const lines = typeof header === 'string' ? [header] : header;
  const out = new Set<string>();
  for (const line of lines) {
    for (const part of line.split(',')) {
      const name = part.trim();
      if (name) out.add(name);
    }
  }
  return [...out];
}

/**
 * Beta features a translation to Chat Completions keeps the meaning of
 * whatever the call holds: a client's name for itself, streamed tool input
 * (Chat streams arguments as they come anyway), system messages in place,
 * structured output (translated to `response_format`).
 */
export const CHAT_HONOURED_BETAS = new Set([
  'claude-code-20250219',
  'fine-grained-tool-streaming-2025-05-14',
  'mid-conversation-system-2026-04-07',
  'structured-outputs-2025-11-13',
]);

/** Beta features kept only when the call's reasoning control reaches the provider (`reasoning_effort`). */
export const REASONING_BETAS = new Set(['interleaved-thinking-2025-05-14', 'effort-2025-11-24']);
