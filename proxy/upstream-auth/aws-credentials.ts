import { AppError } from '../../shared/errors.js';
import type { NowMs } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { AwsCredentials } from './aws-sign.js';

/** Where credentials come from: the standard chain in production, a stub in tests. */
export type AwsCredentialLoader = () => Promise<AwsCredentials>;

/**
 * The AWS SDK's standard chain: environment, shared config and credentials
 * files (profiles, SSO, process), web identity (a Kubernetes service
 * account's token), then container and instance metadata. Imported on the
 * first call only: a deployment without a Bedrock provider never loads it.
 */
export function standardAwsChain(): AwsCredentialLoader {
  let chain: AwsCredentialLoader | undefined;
  return async () => {
    if (!chain) {
      const { fromNodeProviderChain } = await import('@aws-sdk/credential-providers');
      chain = fromNodeProviderChain();
    }
    return chain();
  };
}

/**
 * Credentials are renewed this long before they expire. The SDK's chain
 * keeps what it loaded until the same point, so a renewal asks it exactly
 * when it has new ones to give.
 */
export const AWS_REFRESH_MARGIN_MS = 5 * 60_000;

/** After a failed renewal, still-valid credentials serve this long before the next try: a down metadata endpoint is not asked once per call. */
const RETRY_AFTER_FAILURE_MS = 10_000;

export interface AwsCredentialSourceOptions {
  /** The provider's name in the models file, for messages and logs. */
  provider: string;
  load: AwsCredentialLoader;
  nowMs: NowMs;
  log: Logger;
  refreshMarginMs?: number;
}

export interface AwsCredentialSource {
  /** Credentials valid now, renewed ahead of their expiry; an `AppError` (503) naming the provider when there are none. */
  get(): Promise<AwsCredentials>;
}

/** What is missing, in words an operator can act on, never holding a secret. */
function missingWhat(err: unknown, stale: AwsCredentials | undefined): string {
  const base =
    stale?.expiration !== undefined
      ? `its AWS credentials expired at ${stale.expiration.toISOString()} and could not be renewed`
      : 'no AWS credentials were found (environment, shared config files, web identity token, container or instance metadata)';
  const name = err instanceof Error ? err.name : '';
  return name && name !== 'Error' ? `${base} (${name})` : base;
}

/**
 * One provider's AWS credentials, loaded once and shared by its calls,
 * renewed `refreshMarginMs` before they expire by one load that concurrent
 * calls wait on. While a renewal fails, credentials that have not yet
 * expired keep serving (and the load is tried again every few seconds); once none are valid a call gets a 503 naming the
 * provider and what is missing. A failing episode is logged once when it
 * starts and once when it ends, not once per call.
 */
export function createAwsCredentialSource(options: AwsCredentialSourceOptions): AwsCredentialSource {
  const margin = options.refreshMarginMs ?? AWS_REFRESH_MARGIN_MS;
  let current: AwsCredentials | undefined;
  let loading: Promise<AwsCredentials> | undefined;
  let failing = false;
  let retryAt = 0;

  const validFor = (c: AwsCredentials): number => (c.expiration === undefined ? Infinity : c.expiration.getTime() - options.nowMs());

  async function renew(): Promise<AwsCredentials> {
    try {
      const fresh = await options.load();
      current = fresh;
      if (failing) options.log.info({ provider: options.provider }, 'AWS credentials are available again');
      failing = false;
      return fresh;
    } catch (err) {
      const stale = current;
      if (!failing)
        options.log.error({ provider: options.provider, reason: err instanceof Error ? err.name : 'unknown' }, 'AWS credentials could not be loaded');
      failing = true;
      retryAt = options.nowMs() + RETRY_AFTER_FAILURE_MS;
      if (stale && validFor(stale) > 0) return stale;
      throw new AppError('unavailable', `Provider "${options.provider}" cannot be called: ${missingWhat(err, stale)}.`, { cause: err });
    } finally {
      loading = undefined;
    }
  }

  return {
    get() {
      if (current && validFor(current) > margin) return Promise.resolve(current);
      if (current && failing && validFor(current) > 0 && options.nowMs() < retryAt) return Promise.resolve(current);
      loading ??= renew();
      return loading;
    },
  };
}
