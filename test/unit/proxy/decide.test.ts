import { expect } from 'chai';
import { decideKey, decideModel } from '../../../proxy/decide.js';
import type { ResolvedKey } from '../../../shared/contract/keys.js';
import { resolvedKey } from '../../support/keys.js';
import { testConfig } from '../../support/control-plane.js';

const catalog = testConfig().models;
const NOW = Date.parse('2026-01-01T00:00:00Z');

const key = resolvedKey;

/** The two decisions as the edge chains them for a model call (the body is parsed between them). */
const statusOf = (k: ResolvedKey | null, slug = 'acme', alias = 'tg/sonnet') => {
  const byKey = decideKey(k, slug, NOW);
  if (!byKey.ok) return byKey.error.status;
  const byModel = decideModel(byKey.key, alias, catalog);
  return byModel.ok ? 200 : byModel.error.status;
};

describe('proxy: key and model decisions, in the order the edge makes them', () => {
  it('200 for an active key of this workspace calling an allowed model with money left', () => {
    expect(statusOf(key())).to.equal(200);
  });

  it('401 for no key, another workspace, revoked, or expired — before any model check', () => {
    expect(statusOf(null, 'acme', 'tg/nope')).to.equal(401);
    expect(statusOf(key(), 'other', 'tg/nope')).to.equal(401);
    expect(statusOf(key({ revoked: true }), 'acme', 'tg/nope')).to.equal(401);
    expect(statusOf(key({ expires_at: new Date(NOW).toISOString() }))).to.equal(401);
    expect(statusOf(key({ expires_at: new Date(NOW + 1000).toISOString() }))).to.equal(200);
  });

  it('404 for an unknown alias comes before 403 for a known one the team may not use', () => {
    expect(statusOf(key({ models: [] }), 'acme', 'tg/nope')).to.equal(404);
    expect(statusOf(key({ models: [] }), 'acme', 'tg/haiku')).to.equal(403);
  });

  it('402 for a balance that is not positive or a budget used up, after the model checks', () => {
    expect(statusOf(key({ balance_micros: 0 }))).to.equal(402);
    expect(statusOf(key({ balance_micros: -5 }))).to.equal(402);
    expect(statusOf(key({ key_remaining_micros: 0 }))).to.equal(402);
    expect(statusOf(key({ balance_micros: 0 }), 'acme', 'tg/haiku')).to.equal(403);
  });

  it('a client name is its alias’s call: access is the alias’s, and a refusal names both', () => {
    // The test models file gives tg/gpt-direct `client_names: ["claude-*"]`.
    const allowed = decideModel(key({ models: ['tg/gpt-direct'] }), 'claude-sonnet-4-6', catalog);
    expect(allowed.ok && allowed.model.alias).to.equal('tg/gpt-direct');
    const refused = decideModel(key({ models: ['tg/sonnet'] }), 'claude-sonnet-4-6', catalog);
    expect(refused.ok ? 200 : [refused.error.status, refused.error.message]).to.deep.equal([
      403,
      'This key\'s team may not use the model "tg/gpt-direct" (asked for as "claude-sonnet-4-6").',
    ]);
    expect(statusOf(key(), 'acme', 'gpt-4o-mini')).to.equal(404);
  });
});
