import type { Logger } from '../../shared/logger.js';

/**
 * A cloud refusing one provider's own credentials or signature (Bedrock's
 * 403s): each refused call is answered 503, but the log gets one line when
 * the trouble starts and one when a call is accepted again, not a line per
 * call, as a token that cannot be minted is logged (bearer-token.ts).
 */
export interface RefusalEpisode {
  /** A call was refused: `message` is the 503's text (the provider named, what the cloud said, never a secret). */
  refused(message: string): void;
  /** A call was accepted: an episode of refusals, if one was running, is over. */
  accepted(): void;
}

export function createRefusalEpisode(provider: string, log: Logger): RefusalEpisode {
  let refusing = false;
  return {
    refused(message) {
      if (refusing) return;
      refusing = true;
      log.warn({ provider }, message);
    },
    accepted() {
      if (!refusing) return;
      refusing = false;
      log.info({ provider }, 'the cloud accepts the provider’s credentials again');
    },
  };
}
