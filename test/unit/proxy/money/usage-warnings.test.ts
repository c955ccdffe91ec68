import { expect } from 'chai';
import { pino } from 'pino';
import { createUsageWarnings } from '../../../../proxy/money/usage-warnings.js';

function recording() {
  const lines: Array<{ provider?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { provider?: string }) });
  return { logger, lines };
}

describe('proxy money: missing or malformed usage is warned once per provider per episode', () => {
  it('warns on the first call of an episode only, per provider, and again after the provider reported usage', () => {
    const { logger, lines } = recording();
    const w = createUsageWarnings(logger);
    for (let i = 0; i < 50; i++) w.missing('selfhosted', `r${i}`);
    w.missing('other', 'x');
    expect(lines.map((l) => l.provider)).to.deep.equal(['selfhosted', 'other']);
    w.reported('selfhosted');
    w.missing('selfhosted', 'again');
    w.missing('other', 'still');
    expect(lines.map((l) => l.provider)).to.deep.equal(['selfhosted', 'other', 'selfhosted']);
  });
});
