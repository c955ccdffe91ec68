import { usageFormatOf } from './usage-format.js';
import type { RefusalReason } from '../../shared/contract/usage.js';
import { AppError } from '../../shared/errors.js';
import type { Action, CallState, EdgeDeps } from './steps/step.js';

/** The actions whose refusals are usage: the ones that bill. */
const BILLED: Readonly<Record<Action, boolean>> = { call: true, compact: true, embed: true, count: false, models: false, model: false };

/** Which refusal an admission step's error is, by its kind; undefined for what is not Tollgate's refusal (503, 500). */
function reasonOf(s: CallState, err: AppError): RefusalReason | undefined {
  switch (err.kind) {
    case 'unauthenticated':
      return 'key';
    case 'invalid_input':
    case 'too_large':
      return 'bad_request';
    case 'not_found':
    case 'forbidden':
      return 'model_access';
    case 'rate_limited':
      return 'rate_limit';
    case 'insufficient_funds':
      return s.detail === 'balance' ? 'balance' : 'budget';
    default:
      return undefined;
  }
}

/**
 * A call the proxy refused before holding money is counted for the usage
 * console (money/refusals.ts), by the key it presented. A key nobody knows
 * (unknown, malformed, absent) is not counted: it belongs to no key, and
 * counting it at the workspace would let anyone who knows the slug write
 * to its usage. A refusal after the hold is the call's own outcome, recorded
 * when its hold goes back. A token count or a model list is no call (it
 * bills nothing): its refusals are seen in the metrics and the access log only.
 */
export function countRefusal(s: CallState, deps: EdgeDeps, thrown: unknown): void {
  if (s.held || !(thrown instanceof AppError) || !BILLED[s.route.action]) return;
  const key = s.key ?? s.refusedKey;
  if (!key) return;
  const reason = reasonOf(s, thrown);
  if (!reason) return;
  deps.metering.refused({
    requestId: s.requestId,
    keyId: key.id,
    workspaceId: key.workspace_id,
    model: s.call?.alias ?? '',
    reason,
    format: usageFormatOf(s),
    status: thrown.status,
    startedAtMs: Math.round(performance.timeOrigin + s.startedMs),
  });
}
