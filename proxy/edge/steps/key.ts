import type { IncomingMessage } from 'node:http';
import { AppError } from '../../../shared/errors.js';
import { isWellFormedSecret, sha256Hex } from '../../../shared/secrets.js';
import type { ResolvedKey } from '../../../shared/contract/keys.js';
import type { WireFormat } from '../../call.js';
import { decideKey } from '../../decide.js';
import { ambiguousCredentials, presentedKey } from '../../headers.js';
import type { Lookup } from '../../key-cache.js';
import type { EdgeCall } from '../../observe.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';
import { WIRE } from '../../wire/registry.js';

function keyOf(found: Lookup, timing: EdgeCall): ResolvedKey | null {
  timing.keyAt = performance.now();
  if (found.kind === 'unavailable') {
    throw new AppError('unavailable', 'The key could not be checked right now. Retry shortly.');
  }
  return found.kind === 'known' ? found.key : null;
}

/**
 * The caller's key: from the cache at once when it is there (the usual
 * case, no promise), else a promise of the control plane's answer. The
 * lookup's start and end are stamped on `timing` (the trace's key span).
 */
export function lookupKey(
  deps: EdgeDeps,
  req: IncomingMessage,
  format: WireFormat,
  timing: EdgeCall,
): ResolvedKey | null | Promise<ResolvedKey | null> {
  if (ambiguousCredentials(req.headers, req.rawHeaders)) return null;
  const presented = presentedKey(req.headers, WIRE[format].clientKeyHeader);
  if (!presented) return null;
  const hash = sha256Hex(presented);
  timing.keyStartAt = performance.now();
  // Only well-formed keys are ever looked up, so a key the cache knows is one: its checksum is checked on a miss alone.
  const hit = deps.keys.cached(hash);
  if (hit) return keyOf(hit, timing);
  // Malformed keys never cost a lookup.
  if (!isWellFormedSecret(presented, 'apiKey')) return null;
  return deps.keys.lookup(hash).then((found) => keyOf(found, timing));
}

function decided(s: CallState, key: ResolvedKey | null, deps: EdgeDeps): StepOutcome {
  const k = decideKey(key, s.route.slug, deps.now());
  if (!k.ok) {
    s.refusedKey = key ?? undefined;
    return k.error;
  }
  s.key = k.key;
  return undefined;
}

/** Step `key` (401): the key before the body, so a caller without a valid key never makes the proxy read what it sends. */
export function checkKey(s: CallState, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const looked = lookupKey(deps, s.req, s.route.format, s.obs);
  return looked instanceof Promise ? looked.then((key) => decided(s, key, deps)) : decided(s, looked, deps);
}
