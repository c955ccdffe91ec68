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
  /** Median over the recorded runs of each run's ratio. */
  ratios: ratioMap,
  /** Allowed excess over the baseline, as a share of it: the measured run-to-run spread. */
  tolerance: ratioMap,
  /** The proxy's four ratios as one score (their geometric mean), with its own spread: see `guardScore`. */
  combined: z.object({ ratio: z.number().positive(), tolerance: z.number().nonnegative() }),
});
export type GuardBaseline = z.infer<typeof guardBaselineSchema>;

const cpuPerCall = z.number().positive();
/** What `--out` records of a run: its rounds, from which `--spread` recomputes everything. */
export const guardRunSchema = z.object({
  rounds: z.array(
    z.object({
      floor: z.object({ chat: cpuPerCall, messages: cpuPerCall }),
      tollgate: z.object(Object.fromEntries(GUARD_RATIOS.map((r) => [r, cpuPerCall])) as Record<GuardRatio, typeof cpuPerCall>),
    }),
  ),
});

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Translated calls are set against the floor of the client's format: what the caller sent is what was forwarded. */
const floorFormat = (ratio: GuardRatio): 'chat' | 'messages' => (ratio.startsWith('messages') ? 'messages' : 'chat');

/**
 * Each ratio as the least CPU per call Tollgate reached in the run over the
 * least the floor reached. On this VM load only ever adds to a process's CPU
 * per call (its clock counts time the host takes away, and a starved load
 * driver batches less), so the quietest round of each is the truest figure:
 * over ten runs of the same code this put each ratio within 14–29 % of its
 * median, where the median of per-round ratios spread 23–49 % (docs/bench.md).
 */
export function guardRatios(rounds: readonly GuardRound[]): Record<GuardRatio, number> {
  if (rounds.length === 0) throw new Error('the guard measured no rounds');
  const least = (xs: number[]) => Math.min(...xs);
  return Object.fromEntries(
    GUARD_RATIOS.map((r) => [r, least(rounds.map((x) => x.tollgate[r])) / least(rounds.map((x) => x.floor[floorFormat(r)]))]),
  ) as Record<GuardRatio, number>;
}

/** The ratios that make the combined score: the proxy's four (the tree adds the control plane's noise, 27 %). */
const SCORED: readonly GuardRatio[] = ['chat', 'messages', 'chat translated', 'messages translated'];

/**
 * One score for the proxy: the geometric mean of its four ratios. A slip in
 * a step every call runs moves all four, while load moves them apart, so the
 * score spreads less than any one ratio (16 % over ten runs) — narrow enough
 * that a 15 % slip lands beyond it.
 */
export function guardScore(ratios: Record<GuardRatio, number>): number {
  return Math.exp(SCORED.reduce((sum, r) => sum + Math.log(ratios[r]), 0) / SCORED.length);
}

export interface GuardVerdict {
  ratio: GuardRatio | 'combined';
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

/** The combined score against its baseline, judged as a ratio is. */
export function judgeScore(score: number, baseline: GuardBaseline): GuardVerdict & { ratio: 'combined' } {
  const limit = baseline.combined.ratio * (1 + baseline.combined.tolerance);
  return { ratio: 'combined', measured: score, baseline: baseline.combined.ratio, limit, exceeded: !(score <= limit) };
}

/**
 * A run fails when the combined score exceeds its limit, or when two ratios
 * or more exceed theirs. Every code path shows in two ratios at least (Chat:
 * passed through, translated, the tree; Messages: passed through,
 * translated; translation: both translated), so a real slip moves two; one
 * ratio alone past its limit is what load did to one measurement.
 */
export const GUARD_FAILS_AT = 2;

export function guardFailed(verdicts: readonly GuardVerdict[], combined: GuardVerdict): boolean {
  // A ratio that could not be computed is a broken measurement, not noise.
  if (!Number.isFinite(combined.measured) || verdicts.some((v) => !Number.isFinite(v.measured))) return true;
  return combined.exceeded || verdicts.filter((v) => v.exceeded).length >= GUARD_FAILS_AT;
}

export interface GuardSpread {
  ratio: GuardRatio | 'combined';
  min: number;
  median: number;
  max: number;
  /** (max − min) ÷ median: how far apart runs of the same code landed. */
  spread: number;
}

function spreadOf(ratio: GuardSpread['ratio'], xs: readonly number[]): GuardSpread {
  const m = median(xs);
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  return { ratio, min, median: m, max, spread: (max - min) / m };
}

/** Run-to-run spread of each ratio, and of the combined score, over several runs' rounds. */
export function guardSpread(runs: readonly (readonly GuardRound[])[]): GuardSpread[] {
  if (runs.length < 2) throw new Error('a spread needs two runs or more');
  const ratios = runs.map(guardRatios);
  return [
    ...GUARD_RATIOS.map((ratio) =>
      spreadOf(
        ratio,
        ratios.map((r) => r[ratio]),
      ),
    ),
    spreadOf('combined', ratios.map(guardScore)),
  ];
}
