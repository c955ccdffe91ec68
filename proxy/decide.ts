import { AppError } from '../shared/errors.js';
import type { ModelCatalog, ModelConfig, ProviderConfig } from '../shared/models.js';
import type { ResolvedKey } from '../shared/contract/keys.js';
import { modelByName } from '../shared/client-names.js';
import { keyBudgetLeft } from './money/snapshot.js';
import { periodEndMs } from '../shared/budget-period.js';

/** A period budget's refusal says when it ends: " for this month (it resets at 2026-03-01T00:00:00.000Z)". */
function untilReset(key: ResolvedKey, nowMs: number): string {
  if (!key.budget_period) return '';
  return ` for this ${key.budget_period} (it resets at ${new Date(periodEndMs(key.budget_period, nowMs)).toISOString()})`;
}

/** How a key's budget is raised, said in every 402 about it. */
export const RAISE_BUDGET = "An owner or admin raises it with PATCH /v1/keys/{key_id} (budget_usd), or Edit on the console's Keys page.";

/*
 * The edge's refusals, in the order it makes them (the step list in proxy/edge/index.ts):
 * decideKey (401) → the body is parsed (400) → decideModel (404 → 403 → 402)
 * → rate limits (429) → the hold of the worst-case cost (402). The model
 * list asks decideKey only.
 */

export type KeyDecision = { ok: true; key: ResolvedKey } | { ok: false; error: AppError };
export type ModelDecision = { ok: true; model: ModelConfig; provider: ProviderConfig } | { ok: false; error: AppError };

const INVALID_KEY = 'Invalid API key.';
const WRONG_WORKSPACE = 'Invalid API key for this workspace: check the workspace slug in the base URL.';

/** The key alone: right workspace, not revoked, not expired. Both formats and both model lists use this. */
export function decideKey(key: ResolvedKey | null, workspaceSlug: string, nowMs: number): KeyDecision {
  // One message for every kind of bad key: the caller learns nothing about which it was.
  if (!key || key.revoked || (key.expires_at !== null && Date.parse(key.expires_at) <= nowMs)) {
    return { ok: false, error: new AppError('unauthenticated', INVALID_KEY) };
  }
  // A live key at another workspace's URL: still 401, and whether the slug
  // exists stays unsaid (the answer is the same for any slug but the key's own).
  if (key.workspace_slug !== workspaceSlug) {
    return { ok: false, error: new AppError('unauthenticated', WRONG_WORKSPACE) };
  }
  return { ok: true, key };
}

/**
 * What a key that passed `decideKey` may do with a model: known (404) →
 * allowed for the key's team (403) → money left on the workspace and the
 * key (402). The edge parses the body between the two halves, so a bad key
 * is refused (401) before a bad body (400).
 */
export function decideModel(key: ResolvedKey, name: string, catalog: ModelCatalog, nowMs: number = Date.now()): ModelDecision {
  // An alias or one of its client names: from here on the call is the alias's (its access, prices, usage).
  const model = modelByName(catalog, name);
  if (!model) {
    return { ok: false, error: new AppError('not_found', `The model "${name}" does not exist.`, { code: 'model_not_found' }) };
  }
  if (!key.models.includes(model.alias)) {
    const which = model.alias === name ? `"${name}"` : `"${model.alias}" (asked for as "${name}")`;
    return { ok: false, error: new AppError('forbidden', `This key's team may not use the model ${which}.`) };
  }
  if (key.balance_micros <= 0) {
    return { ok: false, error: new AppError('insufficient_funds', 'The workspace balance is not positive. Add credits to continue.') };
  }
  const left = keyBudgetLeft(key, nowMs).remainingMicros;
  if (left !== null && left <= 0) {
    return {
      ok: false,
      error: new AppError('insufficient_funds', `This key's budget is used up${untilReset(key, nowMs)}. ${RAISE_BUDGET}`),
    };
  }
  return { ok: true, model, provider: catalog.providers.get(model.provider)! };
}

/** The aliases a key may call: on its team's list and in the catalog. */
export function allowedAliases(key: ResolvedKey, catalog: ModelCatalog): string[] {
  return key.models.filter((a) => catalog.models.has(a));
}
