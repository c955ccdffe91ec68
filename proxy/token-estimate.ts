/**
 * Token counting with a time budget, run in the counting worker
 * (token-worker.ts). BPE over a long run with no spaces is superlinear:
 * measured on the 2-core test machine, one 4 KiB run of base64 takes ~30 ms
 * and 1 MiB of it ~2.5 s, so a 10 MiB body could cost a core for minutes.
 * The text is counted exactly until the budget is spent; the rest is
 * estimated from its length at the rate measured so far.
 */

type Counter = (text: string) => number;

/**
 * The longest text handed to the tokenizer at once, so the budget is checked
 * often: the worst case measured (one base64 run) is ~4 ms at this length.
 */
const SLICE_CHARS = 512;

/** Characters per token assumed when nothing could be counted (OpenAI's rule of thumb for English). */
export const CHARS_PER_TOKEN = 4;

/** A length-only estimate: what is answered when the tokenizer cannot be used. */
export function estimateFromLength(texts: readonly string[]): number {
  let chars = 0;
  for (const t of texts) chars += t.length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Where `text` may be cut at or before SLICE_CHARS without changing its
 * tokens: just before a space that follows a non-space. o200k's pre-tokenizer
 * never puts a non-space and a following space in one piece (a space only
 * ever starts a word or punctuation piece, or belongs to a whitespace-only
 * piece), so both halves tokenize as they did together. A run with no such
 * place (a base64 blob, say) is cut hard: at most a token or two differs.
 */
function sliceEnd(text: string, start: number): number {
  const end = Math.min(text.length, start + SLICE_CHARS);
  if (end === text.length) return end;
  for (let i = end; i > start + 1; i--) {
    if (text.charCodeAt(i) === 32 && !/\s/.test(text[i - 1]!)) return i;
  }
  return end;
}

/**
 * The tokens of all `texts`, counted exactly for up to `budgetMs` of counting
 * time and estimated beyond it (at the tokens-per-character rate of what was
 * counted).
 */
export function countWithinBudget(texts: readonly string[], count: Counter, budgetMs: number, now: () => number = () => performance.now()): number {
  const started = now();
  let tokens = 0;
  let countedChars = 0;
  let uncountedChars = 0;
  for (const text of texts) {
    let pos = 0;
    while (pos < text.length) {
      if (now() - started >= budgetMs) {
        uncountedChars += text.length - pos;
        break;
      }
      const end = sliceEnd(text, pos);
      tokens += count(text.slice(pos, end));
      countedChars += end - pos;
      pos = end;
    }
  }
  if (uncountedChars === 0) return tokens;
  const rate = countedChars > 0 && tokens > 0 ? tokens / countedChars : 1 / CHARS_PER_TOKEN;
  return tokens + Math.ceil(uncountedChars * rate);
}
