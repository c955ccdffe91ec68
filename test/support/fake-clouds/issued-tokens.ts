import { randomBytes } from 'node:crypto';

/**
 * The access tokens a fake token endpoint has issued, each good until its
 * expiry: the cloud fake in front of the model accepts these and nothing
 * else, as the real service accepts only its own identity platform's tokens.
 */
export interface IssuedTokens {
  /** Seconds each new token lives: a test shortens it to see refreshes. */
  lifetimeSeconds: number;
  /** A new token, good for `lifetimeSeconds` from now. */
  issue(): string;
  /** 'ok', or why the token is refused. */
  check(token: string | undefined): 'ok' | 'missing' | 'unknown' | 'expired';
  /** How many tokens were issued so far. */
  readonly count: number;
}

export function issuedTokens(prefix: string, lifetimeSeconds: number): IssuedTokens {
  const expiry = new Map<string, number>();
  return {
    lifetimeSeconds,
    issue() {
      const token = `${prefix}${randomBytes(24).toString('base64url')}`;
      expiry.set(token, Date.now() + this.lifetimeSeconds * 1000);
      return token;
    },
    check(token) {
      if (token === undefined) return 'missing';
      const until = expiry.get(token);
      if (until === undefined) return 'unknown';
      return Date.now() < until ? 'ok' : 'expired';
    },
    get count() {
      return expiry.size;
    },
  };
}

/** The token of an `Authorization: Bearer` header, if that is what came. */
export function bearerOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer (\S+)$/i.exec(header);
  return match?.[1];
}
