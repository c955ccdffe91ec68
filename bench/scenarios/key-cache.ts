import type { BenchContext } from '../lib/context.js';

export async function keyCacheScenario(ctx: BenchContext): Promise<void> {
  ctx.log('key cache: not wired yet');
}
