import { expect } from 'chai';
import type { ConfigError } from '../../../shared/config.js';
import { testConfig } from '../../support/control-plane.js';

describe('proxy: settings', () => {
  it('defaults that keep the hold accounting sound', () => {
    const p = testConfig().proxy;
    expect(p).to.include({ maxBodyBytes: 10 * 1024 * 1024, keyNegativeMs: 2000, versionPollMs: 1000, holdTtlSeconds: 900 });
    expect(p.holdTtlSeconds * 2000).to.be.greaterThan(p.keyStaleMs);
  });

  it('refuses a hold TTL too short for the stale window, and non-numbers, naming each setting', () => {
    let problems: string[] = [];
    try {
      testConfig({ PROXY_HOLD_TTL_SECONDS: '60', PROXY_KEY_STALE_MS: '600000', PROXY_MAX_BODY_BYTES: 'lots' });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems.some((p) => p.startsWith('PROXY_HOLD_TTL_SECONDS:'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('PROXY_MAX_BODY_BYTES:'))).to.equal(true);
  });
});
