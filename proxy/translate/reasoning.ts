/**
 * How much to reason, in each format's own terms: Chat Completions names a
 * level (`reasoning_effort`), Messages a token budget (`thinking.budget_tokens`)
 * or, on newer models, a level too (`output_config.effort`). The two scales
 * meet at three points — low 1,024 (Anthropic's smallest budget), medium
 * 4,096, high 16,384 — and a budget between two points goes to the nearer one
 * on a log scale (below 2,048 low, below 8,192 medium, else high), so a budget
 * taken from a level maps back to that same level.
 */

export type ChatEffort = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** Anthropic refuses a thinking budget below this. */
export const MIN_THINKING_BUDGET = 1024;

const BUDGETS: Record<ChatEffort, number> = {
  minimal: MIN_THINKING_BUDGET,
  low: MIN_THINKING_BUDGET,
  medium: 4096,
  high: 16384,
  xhigh: 32768,
};

export function isChatEffort(v: unknown): v is ChatEffort {
  return typeof v === 'string' && Object.hasOwn(BUDGETS, v);
}

/** A thinking budget → the Chat level nearest to it. */
export function effortOfBudget(budget: number): 'low' | 'medium' | 'high' {
  if (budget < 2048) return 'low';
  return budget < 8192 ? 'medium' : 'high';
}

/**
 * Messages' `output_config.effort` → a Chat level. `max` has no Chat
 * counterpart every provider takes (`xhigh` is known to few), so it asks for
 * `high`, the most they all know.
 */
export function chatEffortOf(effort: unknown): 'low' | 'medium' | 'high' | undefined {
  if (effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  return effort === 'max' ? 'high' : undefined;
}

/**
 * A Chat level → a thinking budget that keeps Anthropic's rules: at least
 * 1,024 and below `max_tokens`. It is held to half of `max_tokens`, so the
 * answer after the thinking keeps room; undefined when that leaves less than
 * the smallest budget.
 */
export function budgetOfEffort(effort: ChatEffort, maxTokens: number): number | undefined {
  const budget = Math.min(BUDGETS[effort], Math.floor(maxTokens / 2));
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}
