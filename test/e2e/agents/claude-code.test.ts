import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runProcess, type RunResult } from '../../support/capture/clients.js';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import type { RecordedRequest } from '../../support/fake-upstream/types.js';

const ROOT = join(import.meta.dirname, '../../..');
const ALIAS = 'tg/gpt-direct';
/** What the file Claude Code reads holds: it must reach the provider in the tool result. */
const SECRET_LINE = 'the tollgate test file says 7f3a9c';

/**
 * The real Claude Code binary (`claude -p`, its default settings) against an
 * alias whose provider speaks only Chat Completions: every request is
 * translated, with its mid-conversation system turns, adaptive thinking,
 * context management and betas. Only the documented recipe's variables are
 * set (base URL, key, the model and fast model as the alias), plus a temp
 * HOME so no user configuration is read and a dead HTTPS proxy so nothing
 * leaves the machine.
 */
describeEachStore('Claude Code on a Chat-Completions-only provider, default settings', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let tmp: string;
  let work: string;

  before(async () => {
    dp = await startDataPlane(store, { fake: { formats: 'chat', defaultBehavior: { kind: 'ok', tools: 'none' } } });
    k = await seedKey(dp.cp.deps, { models: [ALIAS] });
    tmp = mkdtempSync(join(tmpdir(), 'tollgate-claude-'));
    work = join(tmp, 'work');
    mkdirSync(work);
    writeFileSync(join(work, 'notes.txt'), `${SECRET_LINE}\n`);
  });
  after(async () => {
    await dp.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** `models: false` sets no model variable at all: Claude Code sends its own names, which the alias's `client_names` (`claude-*`) take. */
  function claude(prompt: string, credential: 'ANTHROPIC_AUTH_TOKEN' | 'ANTHROPIC_API_KEY', models = true): Promise<RunResult> {
    return runProcess(
      join(ROOT, 'node_modules/.bin/claude'),
      ['-p', prompt],
      {
        HOME: tmp,
        CLAUDE_CONFIG_DIR: join(tmp, '.claude'),
        ANTHROPIC_BASE_URL: `${dp.proxy.url}/${k.slug}/anthropic`,
        [credential]: k.secret,
        ...(models && { ANTHROPIC_MODEL: ALIAS, ANTHROPIC_DEFAULT_HAIKU_MODEL: ALIAS }),
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      work,
      150_000,
    );
  }
  const chatCalls = (): RecordedRequest[] => dp.fake.requests.filter((r) => r.path === '/v1/chat/completions');

  it('completes a prompt: the translated call reaches the provider and the answer is printed and billed', async function () {
    this.timeout(180_000);
    dp.fake.reset();
    const run = await claude('say hi', 'ANTHROPIC_AUTH_TOKEN');
    expect(run.exit, run.stderr || run.stdout).to.equal(0);
    expect(run.stdout).to.match(/tok1 tok2/);
    const calls = chatCalls();
    expect(calls.length).to.be.at.least(1);
    const body = calls[0]!.body as { model: string; messages: { role: string }[]; user?: string };
    expect(body.model).to.not.equal(ALIAS);
    // Claude Code's mid-conversation system turn went as a system message; its JSON user id as a short hash.
    expect(body.messages.map((m) => m.role)).to.include('system');
    expect(body.user ?? '').to.have.length.at.most(64);
    expect(calls[0]!.headers).to.not.have.property('anthropic-beta');
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, k)).entries).to.be.at.least(1);
  });

  it('runs a tool round trip: the provider asks for Read, Claude Code reads the file and sends it back, then answers', async function () {
    this.timeout(180_000);
    dp.fake.reset();
    dp.fake.enqueue({ kind: 'ok', tools: [{ name: 'Read', input: { file_path: join(work, 'notes.txt') } }] });
    const run = await claude('What does notes.txt say?', 'ANTHROPIC_API_KEY');
    expect(run.exit, run.stderr || run.stdout).to.equal(0);
    expect(run.stdout).to.match(/tok1 tok2/);
    const calls = chatCalls();
    expect(calls.length).to.be.at.least(2);
    const second = calls[1]!.body as { messages: { role: string; content?: unknown; tool_calls?: unknown[] }[] };
    const assistant = second.messages.find((m) => m.role === 'assistant' && Array.isArray(m.tool_calls));
    expect(assistant, 'the tool call is in the history').to.not.equal(undefined);
    const tool = second.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool?.content)).to.include(SECRET_LINE);
  });

  it('works with no model variable at all: its own model names reach the alias, billed as the alias, and no unknown-model warning', async function () {
    this.timeout(180_000);
    dp.fake.reset();
    const before = (await moneyOf(dp.cp.deps, k)).entries;
    const run = await claude('say hi', 'ANTHROPIC_AUTH_TOKEN', false);
    expect(run.exit, run.stderr || run.stdout).to.equal(0);
    expect(run.stdout).to.match(/tok1 tok2/);
    expect(`${run.stdout}${run.stderr}`).to.not.match(/doesn't recognize the model|not a recognized model|issue with the selected model/);
    const calls = chatCalls();
    expect(calls.length).to.be.at.least(1);
    // The provider got the alias's upstream model, whatever Claude name Claude Code sent.
    expect(calls.map((c) => (c.body as { model: string }).model)).to.satisfy((names: string[]) => names.every((n) => n === 'gpt-4o-mini'));
    await dp.proxy.drain();
    expect((await moneyOf(dp.cp.deps, k)).entries).to.be.above(before);
    const models = await dp.cp.deps.db.query<{ model: string }>(`SELECT DISTINCT model FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`, [
      k.keyId,
    ]);
    expect(models.map((r) => r.model)).to.deep.equal([ALIAS]);
    // What its model discovery and model lookups read: the alias's limits under the Claude name.
    const one = await fetch(`${dp.proxy.url}/${k.slug}/anthropic/v1/models/claude-sonnet-4-6`, { headers: { 'x-api-key': k.secret } });
    expect(await one.json()).to.deep.include({
      id: 'claude-sonnet-4-6',
      display_name: `claude-sonnet-4-6 (${ALIAS})`,
      max_input_tokens: 128000,
      max_tokens: 16384,
    });
  });
});
