/**
 * Exact money: femtodollars (1e-15 USD) as bigint. A price of up to six
 * decimals per million tokens, times the default cache multipliers (0.1,
 * 1.25, 2), is a whole number of femtodollars per token, so a call's cost is
 * a sum of integer products with nothing rounded. Sums exceed 2^53 quickly
 * (one dollar is 1e15), hence bigint; on the wire a femto amount is a string
 * of digits, in the ledger a numeric with fifteen decimals.
 */
export const FEMTOS_PER_USD = 1_000_000_000_000_000n;
export const FEMTOS_PER_MICRO = 1_000_000_000n;

/** A femto amount as exact decimal USD text ("0.041325000000000"), for a numeric column. */
export function femtosToUsdText(femtos: bigint): string {
  const sign = femtos < 0n ? '-' : '';
  const abs = femtos < 0n ? -femtos : femtos;
  return `${sign}${abs / FEMTOS_PER_USD}.${String(abs % FEMTOS_PER_USD).padStart(15, '0')}`;
}

/** Whole micro-dollars covering a femto amount (rounded up): what a hold in micro-dollars must reserve. */
export function femtosToMicrosCeil(femtos: bigint): bigint {
  const q = femtos / FEMTOS_PER_MICRO;
  return femtos > 0n && femtos % FEMTOS_PER_MICRO !== 0n ? q + 1n : q;
}

export function microsToFemtos(micros: number): bigint {
  return BigInt(micros) * FEMTOS_PER_MICRO;
}
