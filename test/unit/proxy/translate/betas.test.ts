import { expect } from 'chai';
import { BETAS, betasFor } from '../../../../proxy/translate/betas.js';

/** The `anthropic-beta` table: what each provider kind sends and drops. */
describe('anthropic-beta per provider kind', () => {
  const sent = ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-1m-2025-08-07', 'brand-new-2027-01-01'];

  it('sends every beta to Anthropic itself, listed or not: a new feature needs no Tollgate release', () => {
    expect(betasFor('anthropic', sent, false)).to.deep.equal({ sent, dropped: [] });
  });

  for (const kind of ['chat', 'responses'] as const) {
    it(`on a ${kind} provider keeps what the translation honours, reasoning betas only with reasoning, and drops the rest (unknown ones too)`, () => {
      expect(betasFor(kind, sent, false)).to.deep.equal({
        sent: ['claude-code-20250219'],
        dropped: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07', 'brand-new-2027-01-01'],
      });
      expect(betasFor(kind, sent, true).sent).to.deep.equal(['claude-code-20250219', 'interleaved-thinking-2025-05-14']);
    });
  }

  it('names the body fields of each beta that brings any', () => {
    expect(BETAS['context-management-2025-06-27']!.fields).to.deep.equal(['context_management']);
    expect(BETAS['effort-2025-11-24']!.fields).to.deep.equal(['output_config.effort']);
  });
});
