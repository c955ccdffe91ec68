import type { Logger } from '../shared/logger.js';

/**
 * Malformed usage is logged once per provider per episode: the first call
 * of a run of them says so, the rest are billed quietly until the provider
 * reports well-formed usage again (which ends the episode).
 */
export interface UsageWarnings {
  malformed(provider: string, requestId: string): void;
  wellFormed(provider: string): void;
}

export function createUsageWarnings(logger: Logger): UsageWarnings {
  const inEpisode = new Set<string>();
  return {
    malformed(provider, requestId) {
      if (inEpisode.has(provider)) return;
      inEpisode.add(provider);
      logger.warn({ provider, requestId }, 'provider reported malformed usage (a count not a whole non-negative number): billing the hold');
    },
    wellFormed(provider) {
      // Nothing to do on the common path: the set is empty unless a provider is misbehaving.
      if (inEpisode.size !== 0) inEpisode.delete(provider);
    },
  };
}
