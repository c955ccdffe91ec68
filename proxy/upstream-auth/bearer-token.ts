import type { Logger } from '../../shared/logger.js';
import type { NowMs } from '../../shared/clock.js';
import { AppError } from '../../shared/errors.js';

/** A cloud's short-lived access token and when it stops being accepted (ms since the epoch). */
export interface MintedToken {
  token: string;
  expiresAtMs: number;
  /** When the cloud says to fetch the next one (Entra's `refresh_in`), if it says. */
  refreshAtMs?: number;
}

/** What a provider's calls get their `Authorization: Bearer` from. */
export interface BearerTokenSource {
  /** A token good for at least the length of a call's first byte; throws a 503 AppError naming the provider when none can be had. */
  token(): Promise<string>;
}

/**
 * The credentials of a provider cannot be had: a 503 whose message names the
 * provider and what is missing. The cause (a library's error, which may quote
 * a file path or a server's answer, never a secret we hold) goes to the log.
 */
export class CredentialsUnavailable extends AppError {
  constructor(provider: string, what: string, cause?: unknown) {
    super('unavailable', `Provider "${provider}" has no usable credentials: ${what}.`, { cause });
  }
}

/** Fetch the next token this long before expiry, or at half its life when that is shorter (Google and Entra both refresh 5 minutes ahead). */
const REFRESH_AHEAD_MS = 5 * 60_000;
/** A token this close to expiry is not sent: a call could outlive it before the cloud reads it. */
const LAST_USE_MS = 30_000;

interface Held {
  token: string;
  expiresAtMs: number;
  refreshAtMs: number;
  lastUseMs: number;
}

function held(minted: MintedToken, now: number): Held {
  const life = Math.max(0, minted.expiresAtMs - now);
  const ahead = Math.min(REFRESH_AHEAD_MS, life / 2);
  return {
    token: minted.token,
    expiresAtMs: minted.expiresAtMs,
    refreshAtMs: Math.min(minted.refreshAtMs ?? Infinity, minted.expiresAtMs - ahead),
    lastUseMs: minted.expiresAtMs - Math.min(LAST_USE_MS, life / 10),
  };
}

/**
 * Only the cause's message is logged: a token library's error object carries
 * the request it made (google-auth-library's holds the signed assertion, good
 * for an hour of tokens), which a logger would write out whole.
 */
function causeText(cause: unknown): string | undefined {
  if (cause === undefined) return undefined;
  if (cause instanceof Error) return cause.message;
  return typeof cause === 'string' ? cause : 'a failure that is not an Error';
}

export interface BearerTokenOptions {
  provider: string;
  /** Mints a fresh token; throws CredentialsUnavailable (or anything, which is wrapped) when it cannot. */
  mint: () => Promise<MintedToken>;
  log: Logger;
  now?: NowMs;
}

/**
 * One provider's token, minted once and shared by its calls, refreshed in the
 * background before it expires so that no call waits for, or fails on, a
 * refresh while the old token is still good. One mint runs at a time. A
 * failure is logged once per episode (the first failure after a success), not
 * per call: a provider without credentials would otherwise log on every call.
 */
export function createBearerToken(options: BearerTokenOptions): BearerTokenSource {
  const { provider, mint, log } = options;
  const now = options.now ?? Date.now;
  let current: Held | undefined;
  let minting: Promise<Held> | undefined;
  let failing = false;

  function refresh(): Promise<Held> {
    minting ??= mint()
      .then((minted) => {
        current = held(minted, now());
        if (failing) log.info({ provider }, 'upstream credentials recovered');
        failing = false;
        return current;
      })
      .catch((err: unknown) => {
        const error = err instanceof CredentialsUnavailable ? err : new CredentialsUnavailable(provider, 'the token request failed', err);
        if (!failing) log.warn({ provider, cause: causeText(error.cause) }, error.message);
        failing = true;
        throw error;
      })
      .finally(() => {
        minting = undefined;
      });
    return minting;
  }

  return {
    async token() {
      const at = now();
      if (current !== undefined && at < current.lastUseMs) {
        // Still good: a background refresh's failure is already logged, and the next call tries again.
        if (at >= current.refreshAtMs) refresh().catch(() => {});
        return current.token;
      }
      return (await refresh()).token;
    },
  };
}
