/**
 * The arithmetic of the CI guard (`bench/guard.ts`): ratios of CPU per call
 * within one round, their medians over the rounds, the judgement against the
 * committed baseline, and the run-to-run spread the baseline's tolerance is
 * taken from. No processes here, so it is unit-tested without load.
 */
import { z } from 'zod';

/** What the guard sets against the floor: the proxy per format and route, and the `npm start` tree. */
export const GUARD_RATIOS = ['chat', 'messages', 'chat translated', 'messages translated', 'tree chat'] as const;
export type GuardRatio = (typeof GUARD_RATIOS)[number];

/** One round's CPU µs per call: the floor per format, and each measured Tollgate path. */
export interface GuardRound {
  floor: { chat: number; messages: number };
  tollgate: Record<GuardRatio, number>;
}

const ratioMap = z.object(Object.fromEntries(GUARD_RATIOS.map((r) => [r, z.number().positive()])) as Record<GuardRatio, z.ZodNumber>);

export const guardBaselineSchema = z.object({
  /** Why the baseline is what it is: raising it is a commit that says so here and in its message. */
  why: z.string().min(1),
  /** Median over the recorded runs of each run's median ratio. */
  ratios: ratioMap,
  /** Allowed excess over the baseline, as a share of it: the measured run-to-run spread. */
  tolerance: ratioMap,
});
export type GuardBaseline = z.infer<typeof guardBaselineSchema>;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Translated calls are set against the floor of the client's format: what the caller sent is what was forwarded. */
const floorFormat = (ratio: GuardRatio): 'chat' | 'messages' => (ratio.startsWith('messages') ? 'messages' : 'chat');

/** Each ratio within its own round (so a load change hits floor and proxy alike), then the median over rounds. */
export function guardMedians(rounds: readonly GuardRound[]): Record<GuardRatio, number> {
  if (rounds.length === 0) throw new Error('the guard measured no rounds');
  return Object.fromEntries(GUARD_RATIOS.map((r) => [r, median(rounds.map((x) => x.tollgate[r] / x.floor[floorFormat(r)]))])) as Record<
    GuardRatio,
    number
  >;
}

export interface GuardVerdict {
  ratio: GuardRatio;
  measured: number;
  baseline: number;
  limit: number;
  exceeded: boolean;
}

/** A ratio fails when it exceeds its baseline by more than its tolerance. */
export function judgeGuard(measured: Record<GuardRatio, number>, baseline: GuardBaseline): GuardVerdict[] {
  return GUARD_RATIOS.map((ratio) => {
    const limit = baseline.ratios[ratio] * (1 + baseline.tolerance[ratio]);
    return { ratio, measured: measured[ratio], baseline: baseline.ratios[ratio], limit, exceeded: !(measured[ratio] <= limit) };
  });
}

/**
 * A run fails when two ratios or more exceed their limits. Every code path
 * shows in two ratios at least (Chat: passed through, translated, the tree;
 * Messages: passed through, translated; translation: both translated), so a
 * real slip moves two; one ratio alone past its limit is what load did to one
 * measurement (a loaded check run put Chat alone 0.01 % over).
 */
export const GUARD_FAILS_AT = 2;

export function guardFailed(verdicts: readonly GuardVerdict[]): boolean {
  // A ratio that could not be computed is a broken measurement, not noise.
  if (verdicts.some((v) => !Number.isFinite(v.measured))) return true;
  return verdicts.filter((v) => v.exceeded).length >= GUARD_FAILS_AT;
}

export interface GuardSpread {
  ratio: GuardRatio;
  min: number;
  median: number;
  max: number;
  /** (max − min) ÷ median: how far apart runs of the same code landed. */
  spread: number;
}

/** Run-to-run spread of each ratio over several runs' medians. */
export function guardSpread(runs: readonly Record<GuardRatio, number>[]): GuardSpread[] {
  if (runs.length < 2) throw new Error('a spread needs two runs or more');
  return GUARD_RATIOS.map((ratio) => {
    const xs = runs.map((r) => r[ratio]);
    const m = median(xs);
    const min = Math.min(...xs);
    const max = Math.max(...xs);
    return { ratio, min, median: m, max, spread: (max - min) / m };
  });
}
