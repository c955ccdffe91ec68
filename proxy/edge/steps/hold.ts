import { usageFormatOf } from '../usage-format.js';
import { AppError } from '../../../shared/errors.js';
import { outputCeiling } from '../../wire/index.js';
import { lowerCeiling, outputThatFits, worstCost } from '../../money/ceiling.js';
import { costMicros } from '../../money/cost.js';
import type { HoldOutcome } from '../../money/holds.js';
import { moneySnapshot } from '../../money/snapshot.js';
import { chainOf } from '../../routing/deployments.js';
import { RAISE_BUDGET } from '../../decide.js';
import type { CallState, EdgeDeps, Planned, StepOutcome } from './step.js';

function refused(s: CallState, reason: 'balance' | 'budget', why?: string): AppError {
  s.detail = reason;
  const whose = reason === 'balance' ? 'The workspace balance' : "This key's remaining budget";
  const fix = reason === 'balance' ? 'Add credits, or' : `${RAISE_BUDGET} Or`;
  return new AppError(
    'insufficient_funds',
    why
      ? `${whose} cannot cover this request: ${why}. ${fix} lower the thinking budget.`
      : `${whose} cannot cover this request's input with a useful minimum of output (${s.outputFloor} tokens). ${fix} shorten the request.`,
    { headers: s.limitHeaders },
  );
}

/** Only `lowered` micro-dollars were held: the call goes out with the output that fits, and holds exactly what that costs. */
function lowered(s: Planned, deps: EdgeDeps, granted: number): StepOutcome | Promise<StepOutcome> {
  const models = s.chain ?? [s.model];
  const call = s.call;
  const tokens = outputThatFits(models, s.inputEstimate, call.choices, granted);
  const why = lowerCeiling(s.up, tokens);
  const reason = s.key.key_remaining_micros !== null ? 'budget' : 'balance';
  const ids = { workspaceId: s.key.workspace_id, keyId: s.key.id };
  if (why) {
    const released = deps.holds.release(s.requestId, ids);
    return released instanceof Promise ? released.then(() => refused(s, reason, why)) : refused(s, reason, why);
  }
  s.call = { ...call, maxTokens: tokens };
  s.outputLimit = tokens;
  s.limitHeaders = { ...s.limitHeaders, 'x-tollgate-output-limit': String(tokens) };
  const exact = worstCost(models, s.inputEstimate, () => tokens * call.choices);
  const resized = deps.holds.resize(s.requestId, ids, exact);
  return resized instanceof Promise ? resized.then(() => admit(s, deps, exact)) : admit(s, deps, exact);
}

function heldOrRefused(s: Planned, deps: EdgeDeps, held: HoldOutcome, holdMicros: number): StepOutcome | Promise<StepOutcome> {
  if (!held.ok) return refused(s, held.reason);
  if (held.lowered !== undefined) return lowered(s, deps, held.lowered);
  return admit(s, deps, holdMicros);
}

function admit(s: Planned, deps: EdgeDeps, holdMicros: number): StepOutcome {
  const key = s.key;
  s.held = {
    requestId: s.requestId,
    keyId: key.id,
    workspaceId: key.workspace_id,
    tpm: key.tpm,
    model: s.model,
    holdMicros,
    inputEstimate: s.inputEstimate,
    tokensTaken: key.tpm === null ? 0 : Math.min(s.inputEstimate, key.tpm),
    keyBudget: key.key_remaining_micros !== null,
    format: usageFormatOf(s),
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
export function holdMoney(s: Planned, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  if (deps.metering.full()) {
    deps.logger.error(
      { requestId: s.requestId },
      'settlement outbox full (usage the control plane has not taken, or a disk refusing writes): refusing calls until it can record again',
    );
    return new AppError('unavailable', 'Usage cannot be recorded right now. Retry shortly.', {
      headers: { ...s.limitHeaders, 'retry-after': '5' },
    });
  }
  const key = s.key;
  const model = s.model;
  const call = s.call;
  // One hold for the whole call: sized for the dearest alias that may end up serving it.
  if (model.fallbacks.length) s.chain = chainOf(model, deps.config.models, key.models);
  // The least the call may be lowered to: the configured minimum, or its own ceiling when that is smaller.
  s.outputFloor = Math.min(deps.config.proxy.minOutputTokens, call.maxTokens ?? Infinity, model.max_output_tokens);
  const floorOutput = s.outputFloor * call.choices;
  // An alias without fallbacks (most calls) is priced directly: no list and no closures made per call.
  const chain = s.chain;
  const holdMicros = chain
    ? worstCost(chain, s.inputEstimate, (m) => outputCeiling(call, m))
    : costMicros(model, s.inputEstimate, outputCeiling(call, model));
  const floorMicros = chain ? worstCost(chain, s.inputEstimate, () => floorOutput) : costMicros(model, s.inputEstimate, floorOutput);
  let holding;
  try {
    holding = deps.holds.hold(s.requestId, moneySnapshot(key.workspace_id, key.id, key, deps.now()), holdMicros, floorMicros);
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
