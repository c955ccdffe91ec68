import { expect } from 'chai';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../shared/config.js';
import { parseModelCatalog, unsetProviderKeyWarnings } from '../../../shared/models.js';
import { TEST_MODELS_FILE } from '../../support/control-plane.js';

function problemsOf(env: NodeJS.ProcessEnv, mode: Parameters<typeof loadConfig>[1] = 'all'): string[] {
  try {
    loadConfig(env, mode);
    return [];
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

describe('config', () => {
  it('starts with defaults when nothing is set', () => {
    const config = loadConfig({}, 'all');
    expect(config.controlPlanePort).to.equal(8080);
    expect(config.proxyPort).to.equal(8081);
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.publicBaseUrl).to.equal('http://localhost:8080');
    expect(config.edgeBaseUrl).to.equal('http://localhost:8081');
    expect(config.models.models.get('tg/sonnet')?.upstream_model).to.equal('claude-sonnet-4-5');
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({
      CONTROL_PLANE_PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      LOG_LEVEL: 'loud',
      MODELS_FILE: '/nonexistent/models.json',
    });
    expect(problems).to.have.length(4);
    expect(problems.join('\n')).to.include('CONTROL_PLANE_PORT').and.include('DATABASE_URL').and.include('LOG_LEVEL').and.include('MODELS_FILE');
  });

  it('requires CONTROL_PLANE_URL and DATA_PLANE_TOKEN for a standalone proxy', () => {
    const problems = problemsOf({ MODELS_FILE: TEST_MODELS_FILE }, 'proxy');
    expect(problems.join('\n')).to.include('CONTROL_PLANE_URL').and.include('DATA_PLANE_TOKEN');
  });

  it('never prints a database password', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://u:hunter2@db/x' });
    expect(problems.join('\n')).not.to.include('hunter2');
  });

  it('names the bad key in a models file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-models-'));
    const file = join(dir, 'models.json');
    writeFileSync(
      file,
      JSON.stringify({
        alias_prefix: 'tg',
        providers: { p: { chat_completions_base_url: 'http://x/v1', messages_base_url: 'http://x', api_key_env: 'K' } },
        models: [
          { alias: 'other/m', provider: 'p', upstream_model: 'm', input_usd_per_mtok: 1, output_usd_per_mtok: 1, max_output_tokens: 1 },
          { alias: 'tg/n', provider: 'nope', upstream_model: 'n', input_usd_per_mtok: 1, output_usd_per_mtok: 1, max_output_tokens: 1 },
        ],
      }),
    );
    const problems = problemsOf({ MODELS_FILE: file });
    expect(problems).to.deep.equal([
      'models file: model "other/m": alias must start with "tg/"',
      'models file: model "tg/n": provider: unknown provider "nope"',
    ]);
  });

  it('warns once per provider whose key variable is unset, naming the variable and its models', () => {
    const provider = (env: string) => ({ chat_completions_base_url: 'http://x/v1', messages_base_url: 'http://x', api_key_env: env });
    const model = (alias: string, p: string) => ({
      alias,
      provider: p,
      upstream_model: 'm',
      input_usd_per_mtok: 1,
      output_usd_per_mtok: 1,
      max_output_tokens: 1,
    });
    const { catalog } = parseModelCatalog(
      {
        alias_prefix: 'tg',
        providers: { a: provider('A_KEY'), b: provider('B_KEY') },
        models: [model('tg/a1', 'a'), model('tg/a2', 'a'), model('tg/b', 'b')],
      },
      { B_KEY: 'sk-b' },
    );
    const warnings = unsetProviderKeyWarnings(catalog!);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/^warning: A_KEY is not set: provider "a" \(tg\/a1, tg\/a2\)/);
    expect(warnings[0]).to.include('401');
    expect(
      unsetProviderKeyWarnings(
        parseModelCatalog({ alias_prefix: 'tg', providers: { a: provider('A_KEY') }, models: [model('tg/a1', 'a')] }, { A_KEY: 'sk-a' }).catalog!,
      ),
    ).to.deep.equal([]);
  });
});
