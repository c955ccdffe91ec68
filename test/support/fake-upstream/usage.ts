/**
 * Deterministic token accounting, so tests can compute exact costs:
 * input = ceil(characters of every text in `messages` and `system` / 4), at least 1;
 * output = min(the request's token limit, the behaviour's outputTokens ?? 12).
 */

export const DEFAULT_OUTPUT_TOKENS = 12;

export interface OutputPlan {
  tokens: number;
  /** The request's limit cut the answer short: finish reason `length` / `max_tokens`. */
  capped: boolean;
}

function textLength(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const block of content) {
    if (block !== null && typeof block === 'object') {
      const { type, text } = block as { type?: unknown; text?: unknown };
      if (type === 'text' && typeof text === 'string') total += text.length;
    }
  }
  return total;
}

export function countInputTokens(body: Record<string, unknown>): number {
  let chars = textLength(body.system);
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const message of messages) {
      if (message !== null && typeof message === 'object') {
        chars += textLength((message as { content?: unknown }).content);
      }
    }
  }
  return Math.max(1, Math.ceil(chars / 4));
}

/** The smallest of `max_tokens` / `max_completion_tokens` that the request gave, or undefined. */
export function requestTokenLimit(body: Record<string, unknown>): number | undefined {
  let limit: number | undefined;
  for (const value of [body.max_tokens, body.max_completion_tokens]) {
    if (typeof value === 'number' && (limit === undefined || value < limit)) limit = value;
  }
  return limit;
}

export function planOutput(limit: number | undefined, wanted: number): OutputPlan {
  if (limit !== undefined && limit < wanted) return { tokens: limit, capped: true };
  return { tokens: wanted, capped: false };
}

const textCache = new Map<number, string>();

/** `tok1 tok2 … tokN`: one token per word. */
export function tokenText(count: number): string {
  let text = textCache.get(count);
  if (text === undefined) {
    const words: string[] = [];
    for (let i = 1; i <= count; i++) words.push(`tok${i}`);
    text = words.join(' ');
    if (textCache.size < 10_000) textCache.set(count, text);
  }
  return text;
}

/** The i-th (1-based) token as it appears in a stream delta: words after the first carry their space. */
export function tokenPiece(index: number): string {
  return index === 1 ? 'tok1' : ` tok${index}`;
}
