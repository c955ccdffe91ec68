import { expect } from 'chai';
import { modelFromEntry } from '../../../../../shared/models.js';
import { asksForCodexCatalog, codexModelCatalog } from '../../../../../proxy/wire/responses/codex-models.js';

type Entry = Record<string, unknown>;

const model = (extra: Record<string, unknown>) =>
  modelFromEntry({
    alias: 'tg/sonnet',
    provider: 'p',
    upstream_model: 'u',
    input_usd_per_mtok: 3,
    output_usd_per_mtok: 15,
    max_output_tokens: 8000,
    ...extra,
  });

const entries = (json: string): Entry[] => (JSON.parse(json) as { models: Entry[] }).models;

describe("Codex's model catalog", () => {
  it('gives each alias and written-out client name its context window from max_input_tokens, apply_patch free-form, no tool search', () => {
    const m = model({ max_input_tokens: 200000 });
    const [alias, name] = entries(
      codexModelCatalog([
        { id: 'tg/sonnet', model: m },
        { id: 'claude-sonnet-4-6', model: m },
      ]),
    );
    expect(alias).to.include({ slug: 'tg/sonnet', display_name: 'tg/sonnet', context_window: 200000, max_context_window: 200000, priority: 1 });
    expect(name).to.include({ slug: 'claude-sonnet-4-6', display_name: 'claude-sonnet-4-6 (tg/sonnet)', priority: 2 });
    expect(alias).to.include({ apply_patch_tool_type: 'freeform', supports_search_tool: false, shell_type: 'shell_command', visibility: 'list' });
    expect(alias!.base_instructions).to.be.a('string').with.length.above(50);
  });

  it('offers reasoning levels only where the entry says reasoning: true, and leaves the window out when the file gives none', () => {
    const [plain] = entries(codexModelCatalog([{ id: 'tg/sonnet', model: model({}) }]));
    expect(plain!.supported_reasoning_levels).to.deep.equal([]);
    expect(plain).to.not.have.property('default_reasoning_level');
    expect(plain).to.not.have.property('context_window');
    const [thinking] = entries(codexModelCatalog([{ id: 'tg/sonnet', model: model({ reasoning: true }) }]));
    expect((thinking!.supported_reasoning_levels as Entry[]).map((l) => l.effort)).to.deep.equal(['low', 'medium', 'high']);
    expect(thinking!.default_reasoning_level).to.equal('medium');
  });

  it('is what Codex gets when it asks with its version, and only then', () => {
    expect(asksForCodexCatalog('/acme/v1/models?client_version=0.171.0')).to.equal(true);
    expect(asksForCodexCatalog('/acme/v1/models')).to.equal(false);
    expect(asksForCodexCatalog('/acme/v1/models?limit=1000')).to.equal(false);
    expect(asksForCodexCatalog(undefined)).to.equal(false);
  });
});
