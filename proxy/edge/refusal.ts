import { usageFormatOf } from './usage-format.js';
import type { RefusalReason } from '../../shared/contract/usage.js';
import { AppError } from '../../shared/errors.js';
import type { CallState, EdgeDeps } from './steps/step.js';

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
 * when its hold goes back.
 */
export function countRefusal(s: CallState, deps: EdgeDeps, thrown: unknown): void {
  if (s.held || !(thrown instanceof AppError)) return;
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
