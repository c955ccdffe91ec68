/**
 * Tests skipped because a service is missing on this machine. They are
 * listed at the end of the run; in CI (CI set) nothing may be skipped and
 * the suites that need a service fail instead of calling this.
 */
const skips = new Map<string, string>();

export function skipped(what: string, why: string): void {
  skips.set(what, why);
}

export function reportSkips(): void {
  if (!skips.size) return;
  process.stdout.write(`\nSKIPPED (${skips.size}) because a service is missing on this machine:\n`);
  for (const [what, why] of skips) process.stdout.write(`  - ${what}: ${why}\n`);
}
