import { expect } from 'chai';
import { AppError } from '../../../../shared/errors.js';
import { planUpstream } from '../../../../proxy/edge/steps/access.js';
import { fakeDeps, stateAfter } from './fakes.js';

describe("edge step access: the provider's request, in the provider's format", () => {
  it('a Chat call to a Chat provider goes untranslated, the alias replaced by the upstream model', () => {
    const { deps } = fakeDeps();
    const s = stateAfter(deps, { body: { model: 'tg/gpt-direct', messages: [{ role: 'user', content: 'hi' }] } });
    expect(planUpstream(s, deps)).to.equal(undefined);
    expect(s.up?.format).to.equal('chat');
    expect(s.up?.translate).to.equal(undefined);
    expect(JSON.parse(String(s.up?.body)).model).to.equal('gpt-4o-mini');
  });

  it('a Chat call to a Messages-only provider is translated, and its answer will be too', () => {
    const { deps } = fakeDeps();
    const s = stateAfter(deps, { body: { model: 'tg/claude-direct', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } });
    expect(planUpstream(s, deps), 'a small body is planned at once').to.equal(undefined);
    expect(s.up?.format).to.equal('messages');
    expect(s.up?.translate).to.not.equal(undefined);
    expect(s.up?.path).to.match(/\/v1\/messages$/);
  });

  it('400 (thrown) for a call the translation cannot express, before anything is held', () => {
    const { deps, asked } = fakeDeps();
    const s = stateAfter(deps, { body: { model: 'tg/claude-direct', messages: [{ role: 'user', content: 'hi' }], n: 2 } });
    expect(() => planUpstream(s, deps))
      .to.throw(AppError)
      .with.property('status', 400);
    expect(asked.holds).to.deep.equal([]);
  });
});
