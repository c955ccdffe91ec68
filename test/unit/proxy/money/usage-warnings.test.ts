import { expect } from 'chai';
import type { Logger } from '../../../../shared/logger.js';
import { createUsageWarnings } from '../../../../proxy/usage-warnings.js';

function recordingLogger(lines: unknown[]): Logger {
  return { warn: (obj: unknown) => void lines.push(obj) } as unknown as Logger;
}

describe('usage warnings: malformed usage is logged once per provider per episode', () => {
  it('logs the first malformed call of a provider, not the ones after it, and again after a well-formed one', () => {
    const lines: unknown[] = [];
    const w = createUsageWarnings(recordingLogger(lines));
    for (let i = 0; i < 5; i++) w.malformed('primary', `req_${i}`);
    w.malformed('other', 'req_x');
    expect(lines).to.have.length(2);
    w.wellFormed('primary');
    w.malformed('primary', 'req_again');
    expect(lines).to.have.length(3);
    expect(JSON.stringify(lines)).to.not.match(/usage":/);
  });
});
