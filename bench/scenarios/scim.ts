import type { BenchContext } from '../lib/context.js';

export async function scimScenario(ctx: BenchContext): Promise<void> {
  ctx.log('scim: not wired yet');
}
