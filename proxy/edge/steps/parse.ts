import { readBody } from '../../request-body.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

/** Step `parse` (413, 400): the body read and checked by its format's rules. */
export async function parseBody(s: CallState, deps: EdgeDeps): Promise<StepOutcome> {
  const raw = await readBody(s.req, deps.config.proxy.maxBodyBytes);
  s.call = await deps.bodies.parse(s.route.format, raw, s.req.headers);
  return undefined;
}
