import type { ResolvedKey } from '../../shared/contract/keys.js';

/** A key as the control plane resolves it: active, in workspace `acme`, no limits or budget, money left. */
export function resolvedKey(over: Partial<ResolvedKey> = {}): ResolvedKey {
  return {
    id: 'k',
    org_id: 'o',
    workspace_id: 'w',
    workspace_slug: 'acme',
    team_id: 't',
    owner_user_id: null,
    revoked: false,
    expires_at: null,
    rpm: null,
    tpm: null,
    models: ['tg/sonnet'],
    key_remaining_micros: null,
    key_version: 0,
    balance_micros: 1_000_000,
    balance_version: 1,
    ...over,
  };
}
