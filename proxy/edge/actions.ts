import { planUpstream } from './steps/access.js';
import { answerCount, takeCountLimit } from './steps/count.js';
import { parseEmbeddingsBody, planEmbeddings } from './steps/embed.js';
import { forwardCall } from './steps/forward.js';
import { holdMoney } from './steps/hold.js';
import { checkKey } from './steps/key.js';
import { takeLimits } from './steps/limits.js';
import { meterUsage } from './steps/meter.js';
import { findModel } from './steps/model.js';
import { listModels, oneModel } from './steps/models.js';
import { parseBody } from './steps/parse.js';
import { bindResponses } from './steps/responses-state.js';
import { settleCall } from './steps/settle.js';
import { STAGES, type Action, type At, type Field, type Stage, type Step } from './steps/step.js';

/** One row of the table: a step, the stage it reads, the fields it writes, and the actions it runs for. */
export interface Row {
  readonly name: string;
  readonly reads: Stage;
  readonly step: Step;
  readonly writes: readonly Field[];
  readonly on: readonly Action[];
}

/** An action's steps, in order: what the runner walks. */
export type Steps = readonly (readonly [name: string, step: Step])[];

/**
 * A row of the table. The compiler holds `step` to the stage `reads` names;
 * `writes` is the step's own word for what it sets, which stepsOf trusts.
 */
export function row<S extends Stage>(name: string, reads: S, step: Step<At<S>>, writes: readonly Field[], on: readonly Action[]): Row {
  // The one place a step's stage is widened to the run-time object: stepsOf checks, once, that the rows before it wrote what it reads.
  return { name, reads, step: step as Step, writes, on };
}

const CALL: readonly Action[] = ['call', 'compact'];
const BILLED: readonly Action[] = [...CALL, 'embed'];

/**
 * Every action of the proxy, one table: each row runs for the actions it
 * names, in the table's order. The key, the limits and the observation of
 * each step (observe-steps.ts) are the same code whatever the action. Until
 * the hold, a step may refuse (the client is answered with its error,
 * nothing is owed); from the hold on the money is owed and is settled or
 * released on every path. A step answers its action itself (`count`,
 * `list`, `retrieve`, `settle`'s failure), or `forward` relays the provider's.
 */
export const ACTION_TABLE: readonly Row[] = [
  row('key', 'request', checkKey, ['key'], [...BILLED, 'count', 'models', 'model']), // 401; the key before the body
  row('limits', 'keyed', takeCountLimit, [], ['count']), // 429: counting's own window, before the body is read
  row('parse', 'request', parseBody, ['call'], [...CALL, 'count']), // 413, 400
  row('parse', 'request', parseEmbeddingsBody, ['call'], ['embed']),
  row('model', 'parsed', findModel, ['model', 'provider'], [...BILLED, 'count']), // 404, 403, 402 (decide.ts)
  row('access', 'modelled', planUpstream, ['up'], CALL), // 400: what the provider's format cannot express
  row('access', 'modelled', planEmbeddings, ['up'], ['embed']), // 400: a Messages-only provider has no embeddings
  row('responses', 'planned', bindResponses, [], CALL), // 404: another workspace's previous_response_id; 400: store refused
  row('limits', 'modelled', takeLimits, [], BILLED), // 429
  row('hold', 'planned', holdMoney, ['held'], BILLED), // 503 (outbox full, hold store down), 402
  row('count', 'modelled', answerCount, [], ['count']),
  row('list', 'keyed', listModels, [], ['models']),
  row('retrieve', 'keyed', oneModel, [], ['model']), // 404
  row('forward', 'held', forwardCall, ['outcome'], BILLED),
  row('meter', 'forwarded', meterUsage, ['bill'], BILLED),
  row('settle', 'metered', settleCall, [], BILLED),
];

/** One action's rows, each checked to read only what the rows before it for that action wrote. */
function stepsOf(table: readonly Row[], action: Action): Steps {
  const written = new Set<Field>();
  const steps: (readonly [string, Step])[] = [];
  for (const r of table) {
    if (!r.on.includes(action)) continue;
    const reads: readonly Field[] = STAGES[r.reads];
    const unwritten = reads.filter((f) => !written.has(f));
    if (unwritten.length) throw new Error(`Step ${r.name} of ${action} reads ${unwritten.join(', ')} before any step writes it.`);
    for (const f of r.writes) written.add(f);
    steps.push([r.name, r.step]);
  }
  if (!steps.length) throw new Error(`No step serves ${action}.`);
  return steps;
}

/** Each action's steps, picked from the table once (when the edge is made), never per request. */
export function stepsByAction(table: readonly Row[] = ACTION_TABLE): Record<Action, Steps> {
  const of = (action: Action) => stepsOf(table, action);
  return { call: of('call'), compact: of('compact'), embed: of('embed'), count: of('count'), models: of('models'), model: of('model') };
}
