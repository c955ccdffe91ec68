import { expect } from 'chai';
import { findModel } from '../../../../proxy/edge/steps/model.js';
import { fakeDeps, parsedState, resolvedKey } from './fakes.js';

function find(alias: string, key = resolvedKey()) {
  const { deps } = fakeDeps();
  const s = parsedState({ body: { model: alias, messages: [] }, key });
  return { s, out: findModel(s, deps) };
}

describe('edge step model: the alias, the team and money left', () => {
  it('writes the model and its provider for an allowed alias', () => {
    const { s, out } = find('tg/gpt-direct');
    expect(out).to.equal(undefined);
    expect(s.model?.upstream_model).to.equal('gpt-4o-mini');
    expect(s.provider?.endpoints.chat?.base_url).to.be.a('string');
  });

  it('404 for an unknown alias, 403 for one the team may not use; nothing written', () => {
    for (const [alias, status] of [
      ['tg/nope', 404],
      ['tg/haiku', 403],
    ] as const) {
      const { s, out } = find(alias);
      expect(out?.status).to.equal(status);
      expect(s.model).to.equal(undefined);
    }
  });

  it('402 for a workspace without balance or a key whose budget is used up', () => {
    expect(find('tg/sonnet', resolvedKey({ balance_micros: 0 })).out?.status).to.equal(402);
    expect(find('tg/sonnet', resolvedKey({ key_remaining_micros: 0 })).out?.status).to.equal(402);
  });
});
