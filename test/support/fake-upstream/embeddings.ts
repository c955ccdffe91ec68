import { isObject } from '../../../shared/json.js';

/** The vector length the fake answers with: small, the content is not what the tests look at. */
const DIMENSIONS = 4;

/** One input's token count: its words (a token array counts its items), at least one. */
function inputTokens(input: unknown): number {
  if (typeof input === 'string') return Math.max(1, input.split(/\s+/).filter(Boolean).length);
  if (Array.isArray(input)) return Math.max(1, input.length);
  return 1;
}

/**
 * OpenAI's embeddings answer for a body, or undefined when the body lacks a
 * model or an input (the caller answers 400). `usage.prompt_tokens` is what
 * the proxy bills.
 */
export function embeddingsAnswer(body: unknown): string | undefined {
  if (!isObject(body) || typeof body.model !== 'string') return undefined;
  const inputs: unknown[] = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : [];
  if (inputs.length === 0) return undefined;
  // A flat array of numbers is one tokenized input, not several.
  const items = inputs.every((i) => typeof i === 'number') ? [inputs] : inputs;
  const tokens = items.reduce<number>((sum, i) => sum + inputTokens(i), 0);
  return JSON.stringify({
    object: 'list',
    data: items.map((_, index) => ({ object: 'embedding', index, embedding: Array.from({ length: DIMENSIONS }, (__, d) => (index + 1) / (d + 2)) })),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
