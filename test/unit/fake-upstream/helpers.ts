import { expect } from 'chai';

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  expect.fail('expected the promise to reject');
}

/** Expected input tokens for a prompt of `chars` characters, per the documented formula. */
export function tokensFor(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

export function words(count: number): string {
  return Array.from({ length: count }, (_, i) => `tok${i + 1}`).join(' ');
}
