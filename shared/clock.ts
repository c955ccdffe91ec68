/** Injected wherever time matters so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Milliseconds since the epoch: the proxy's clock, a plain function so that reading it allocates nothing. */
export type NowMs = () => number;
