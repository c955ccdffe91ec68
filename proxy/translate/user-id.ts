import { createHash } from 'node:crypto';

/** OpenAI refuses a Chat Completions `user` longer than this. */
export const CHAT_USER_MAX = 64;
/** Anthropic refuses a `metadata.user_id` longer than this. */
export const MESSAGES_USER_MAX = 256;

/**
 * A client's end-user id for a provider that caps its length: kept as it is
 * when it fits, else the base64url SHA-256 of it (43 characters). The hash is
 * stable — the same id always gives the same value — so the provider's
 * per-user abuse tracking and attribution still see one user across calls;
 * and it is one-way, so a long id that embeds account or session ids (Claude
 * Code's, 150 characters) does not reach the provider in clear.
 */
export function cappedUserId(id: string, max: number): string {
  if (id.length <= max) return id;
  return createHash('sha256').update(id).digest('base64url');
}
