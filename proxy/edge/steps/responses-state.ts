import { AppError } from '../../../shared/errors.js';
import type { UpstreamCall } from '../../wire/index.js';
import { ResponseIdReader } from '../../response-ids.js';
import type { EdgeDeps, Keyed, Parsed, Planned, StepOutcome } from './step.js';
import { WIRE } from '../../wire/registry.js';

/** OpenAI's own answer for an id it does not have: the same whether the id is unknown or another tenant's. */
function previousNotFound(id: string): AppError {
  const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
  return new AppError('not_found', `Previous response with id '${shown}' not found.`, { code: 'previous_response_not_found' });
}

function decide(s: Keyed, id: string, owner: string | undefined): StepOutcome {
  return owner === s.key.workspace_id ? undefined : previousNotFound(id);
}

/**
 * Step `responses`: state kept at a Responses provider belongs to the
 * workspace that made it (docs/security.md, round two, finding 4). A
 * `previous_response_id` is forwarded only when this workspace received that
 * response, else 404 in the Responses shape, before anything is held or sent;
 * and the provider keeps nothing unless the operator allows it
 * (`PROXY_RESPONSES_STORE`). A call without a previous response pays one
 * property read here; one with it, one map lookup (and a Redis GET when
 * another proxy issued the id).
 */
export function bindResponses(s: Planned, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const planned = withStorePolicy(s, deps, s.up);
  if (planned instanceof AppError) return planned;
  s.up = planned;
  if (!WIRE[s.route.format].keepsAnswers) return undefined;
  const id = s.call.body.previous_response_id;
  if (typeof id !== 'string' || id === '') return undefined;
  const owner = deps.responseIds.ownerOf(id);
  return owner instanceof Promise ? owner.then((o) => decide(s, id, o)) : decide(s, id, owner);
}

const STORE_OFF = Buffer.from(',"store":false');

/**
 * The provider's request under the operator's `store` policy, for a call
 * answered by a Responses provider (any other is returned as it is). Off (the
 * default): a client's `store: true` is refused with a 400 naming the field,
 * and a pass-through body that leaves `store` out (or null) gets
 * `"store":false` spliced in before its closing brace (the provider's default
 * is to keep it; after a `null` the later key is the one JSON parsers keep).
 * On: an answer the provider may keep has its response id read and recorded.
 */
export function withStorePolicy(s: Parsed, deps: EdgeDeps, up: UpstreamCall): UpstreamCall | AppError {
  if (!WIRE[up.format].keepsAnswers) return up;
  const store = s.call.body.store;
  if (deps.config.proxy.responsesStore) {
    if (store !== false) s.responseId ??= new ResponseIdReader();
    return up;
  }
  if (store === true) {
    return new AppError(
      'invalid_input',
      'store: this gateway does not keep responses at the provider; send "store": false or leave it out, and send the whole conversation in "input".',
      { code: 'store_not_allowed' },
    );
  }
  // A translated request already says `store` itself; only the client's own bytes can lack it.
  if (up.translate || store === false) return up;
  const close = up.body.lastIndexOf(0x7d);
  if (close < 0) return up;
  return { ...up, body: Buffer.concat([up.body.subarray(0, close), STORE_OFF, up.body.subarray(close)]) };
}
