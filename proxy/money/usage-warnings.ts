import type { Logger } from '../../shared/logger.js';

/**
 * Warns that a provider's answers carry no usable usage (none, or malformed
 * counts: both bill the hold) once per provider per episode rather than per
 * call: a self-hosted server that sends nulls would otherwise write one line
 * per call. An episode ends when that provider reports usable usage again.
 */
export interface UsageWarnings {
  missing(provider: string, requestId: string): void;
  reported(provider: string): void;
}

export function createUsageWarnings(logger: Logger): UsageWarnings {
  const warned = new Set<string>();
  return {
    missing(provider, requestId) {
      if (warned.has(provider)) return;
      warned.add(provider);
      logger.warn(
        { provider, requestId },
        'upstream answer carried no usable usage; billing the hold (logged once until the provider reports usage again)',
      );
    },
    // The common path: one size check while no provider is in an episode.
    reported(provider) {
      if (warned.size !== 0) warned.delete(provider);
    },
  };
}
