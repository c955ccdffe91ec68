import { AppError } from '../../../shared/errors.js';
import { outputCeiling } from '../../formats/index.js';
import { costMicros } from '../../money/cost.js';
import type { HoldOutcome } from '../../money/holds.js';
import { moneySnapshot } from '../../money/snapshot.js';
import { chainOf } from '../../routing/deployments.js';
import { RAISE_BUDGET } from '../../decide.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

function heldOrRefused(s: CallState, deps: EdgeDeps, held: HoldOutcome, holdMicros: number): StepOutcome {
  if (!held.ok) {
    s.detail = held.reason;
    return new AppError(
      'insufficient_funds',
      held.reason === 'balance'
        ? 'The workspace balance cannot cover this request (its worst-case cost). Add credits or lower max_tokens.'
        : `This key's remaining budget cannot cover this request (its worst-case cost). Lower max_tokens. ${RAISE_BUDGET}`,
      { headers: s.limitHeaders },
    );
  }
  const key = s.key!;
  s.held = {
    requestId: s.requestId,
    keyId: key.id,
    workspaceId: key.workspace_id,
    tpm: key.tpm,
    model: s.model!,
    holdMicros,
    inputEstimate: s.inputEstimate,
    tokensTaken: key.tpm === null ? 0 : Math.min(s.inputEstimate, key.tpm),
    keyBudget: key.key_remaining_micros !== null,
    format: s.route.action === 'embed' ? 'embeddings' : s.route.format,
    startedMs: s.startedMs,
    heldAtMs: deps.now(),
  };
  // From here on the hold is owed: it is settled or released on every path, a throw included (edge/index.ts).
  deps.metering.admitted(s.held);
  return undefined;
}

function storeDown(s: CallState, deps: EdgeDeps, err: unknown): never {
  // Money checks fail closed when the hold store is unreachable (docs/proxy.md, Redis outage).
  deps.logger.error({ err, requestId: s.requestId }, 'hold store unavailable');
  throw new AppError('unavailable', 'Spending limits cannot be checked right now. Retry shortly.', { headers: s.limitHeaders });
}

/**
 * Step `hold` (503, 402): the call's worst-case cost reserved on the
 * workspace and the key. Refused while usage cannot be recorded (the outbox
 * is full). In process the hold is decided at once; only Redis is awaited.
 */
export function holdMoney(s: CallState, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  if (deps.metering.full()) {
    deps.logger.error(
      { requestId: s.requestId },
      'settlement outbox full (usage the control plane has not taken, or a disk refusing writes): refusing calls until it can record again',
    );
    return new AppError('unavailable', 'Usage cannot be recorded right now. Retry shortly.', {
      headers: { ...s.limitHeaders, 'retry-after': '5' },
    });
  }
  const key = s.key!;
  const model = s.model!;
  let holdMicros = costMicros(model, s.inputEstimate, outputCeiling(s.call!, model));
  if (model.fallbacks.length) {
    // One hold for the whole call: sized for the dearest alias that may end up serving it.
    s.chain = chainOf(model, deps.config.models, key.models);
    for (const m of s.chain) holdMicros = Math.max(holdMicros, costMicros(m, s.inputEstimate, outputCeiling(s.call!, m)));
  }
  let holding;
  try {
    holding = deps.holds.hold(s.requestId, moneySnapshot(key.workspace_id, key.id, key, deps.now()), holdMicros);
  } catch (err) {
    storeDown(s, deps, err);
  }
  return holding instanceof Promise
    ? holding.then(
        (held) => heldOrRefused(s, deps, held, holdMicros),
        (err: unknown) => storeDown(s, deps, err),
      )
    : heldOrRefused(s, deps, holding, holdMicros);
}
