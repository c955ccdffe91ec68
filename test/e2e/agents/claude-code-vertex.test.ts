import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runProcess, type RunResult } from '../../support/capture/clients.js';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import type { RecordedRequest } from '../../support/fake-upstream/types.js';
import { startCloudPlane, type CloudPlane } from '../../support/fake-clouds/cloud-plane.js';

const ROOT = join(import.meta.dirname, '../../..');
const ALIAS = 'tg/claude-direct';
const SECRET_LINE = 'the tollgate vertex test file says 51c0de';

/** `claude -p` in a cloud mode (`modeEnv`), with the key as its token and the alias as both its models. */
function claudeInMode(
  modeEnv: Record<string, string>,
  prompt: string,
  secret: string,
  alias: string,
  home: string,
  work: string,
): Promise<RunResult> {
  return runProcess(
    join(ROOT, 'node_modules/.bin/claude'),
    ['-p', prompt],
    {
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      ...modeEnv,
      ANTHROPIC_AUTH_TOKEN: secret,
      ANTHROPIC_MODEL: alias,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: alias,
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
    work,
    150_000,
  );
}

/** Vertex mode at a workspace's Vertex route (`…/vertex/v1`). */
const claudeInVertexMode = (prompt: string, baseUrl: string, secret: string, alias: string, home: string, work: string) =>
  claudeInMode(
    {
      CLAUDE_CODE_USE_VERTEX: '1',
      CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
      ANTHROPIC_VERTEX_BASE_URL: baseUrl,
      ANTHROPIC_VERTEX_PROJECT_ID: 'developer-project',
      CLOUD_ML_REGION: 'us-east5',
    },
    prompt,
    secret,
    alias,
    home,
    work,
  );

/** Bedrock mode at a workspace's Bedrock route (`…/bedrock`). */
const claudeInBedrockMode = (prompt: string, baseUrl: string, secret: string, alias: string, home: string, work: string) =>
  claudeInMode(
    { CLAUDE_CODE_USE_BEDROCK: '1', CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1', ANTHROPIC_BEDROCK_BASE_URL: baseUrl, AWS_REGION: 'us-east-1' },
    prompt,
    secret,
    alias,
    home,
    work,
  );

/** A temp HOME with a work folder holding the file Claude Code is asked to read. */
function workFolder(): { tmp: string; work: string } {
  const tmp = mkdtempSync(join(tmpdir(), 'tollgate-claude-vertex-'));
  const work = join(tmp, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'notes.txt'), `${SECRET_LINE}\n`);
  return { tmp, work };
}

/**
 * The real Claude Code binary in its Vertex AI mode (`CLAUDE_CODE_USE_VERTEX`,
 * `ANTHROPIC_VERTEX_BASE_URL` at the workspace's Vertex route, skip-auth so it
 * looks for no Google credentials, the key as `ANTHROPIC_AUTH_TOKEN`) against
 * an alias on a plain Anthropic (Messages) provider: its rawPredict calls are
 * read as Messages calls and billed on the key.
 */
describeEachStore('Claude Code in Vertex mode on an Anthropic provider', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let tmp: string;
  let work: string;

  before(async () => {
    dp = await startDataPlane(store, { fake: { defaultBehavior: { kind: 'ok', tools: 'none' } } });
    k = await seedKey(dp.cp.deps, { models: [ALIAS] });
    ({ tmp, work } = workFolder());
  });
  after(async () => {
    await dp.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const claude = (prompt: string) => claudeInVertexMode(prompt, `${dp.proxy.url}/${k.slug}/vertex/v1`, k.secret, ALIAS, tmp, work);
  const messageCalls = (): RecordedRequest[] => dp.fake.requests.filter((r) => r.path === '/anthropic/v1/messages');

  it('runs a tool round trip through the Vertex route: Read asked, the file sent back, the answer printed, every call billed', async function () {
    this.timeout(180_000);
    dp.fake.reset();
    const before = (await moneyOf(dp.cp.deps, k)).entries;
    dp.fake.enqueue({ kind: 'ok', tools: [{ name: 'Read', input: { file_path: join(work, 'notes.txt') } }] });
    const run = await claude('What does notes.txt say?');
    expect(run.exit, run.stderr || run.stdout).to.equal(0);
    expect(run.stdout).to.match(/tok1 tok2/);
    const calls = messageCalls();
    expect(calls.length).to.be.at.least(2);
    // The provider got a Messages call: its own model name, no Vertex body version.
    const second = calls[1]!.body as { model: string; anthropic_version?: string; messages: { content: unknown }[] };
    expect(second.model).to.equal('claude-sonnet-4-5');
    expect(second).to.not.have.property('anthropic_version');
    expect(JSON.stringify(second.messages)).to.include(SECRET_LINE);
    await dp.proxy.drain();
    const deadline = Date.now() + 10_000;
    while ((await moneyOf(dp.cp.deps, k)).entries < before + calls.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(before + calls.length);
  });
});

/**
 * The same, on a Vertex provider: Claude Code's calls reach Vertex (the fake,
 * taking only Google tokens) with the provider's project, location and
 * model, and are billed on the key — from its Vertex mode, and across clouds
 * from its Bedrock mode (an organization's existing setting), whose
 * InvokeModel calls are read as Messages calls and answered as Bedrock's.
 */
const MODES = [
  { mode: 'Vertex', route: 'vertex/v1', run: claudeInVertexMode },
  { mode: 'Bedrock', route: 'bedrock', run: claudeInBedrockMode },
] as const;
for (const { mode, route, run: claudeIn } of MODES) {
  describeEachStore(`Claude Code in ${mode} mode on a Vertex provider`, (store) => {
    let plane: CloudPlane;
    let tmp: string;
    let work: string;

    before(async function () {
      this.timeout(60_000);
      plane = await startCloudPlane(store, { defaultBehavior: { kind: 'ok', tools: 'none' } });
      ({ tmp, work } = workFolder());
    });
    after(async () => {
      await plane?.close();
      rmSync(tmp, { recursive: true, force: true });
    });

    it(`runs a tool round trip from the ${mode} route to Vertex: Read asked, the file sent back, the answer printed, every call billed`, async function () {
      this.timeout(180_000);
      const { proxy, key, vertex, cp, upstream } = plane;
      const before = (await moneyOf(cp.deps, key)).entries;
      const calls = vertex.calls.length;
      upstream.enqueue({ kind: 'ok', tools: [{ name: 'Read', input: { file_path: join(work, 'notes.txt') } }] });
      const run = await claudeIn('What does notes.txt say?', `${proxy.url}/${key.slug}/${route}`, key.secret, 'tg/sonnet', tmp, work);
      expect(run.exit, run.stderr || run.stdout).to.equal(0);
      expect(run.stdout).to.match(/tok1 tok2/);
      const made = vertex.calls.slice(calls).filter((c) => c.model !== 'count-tokens');
      expect(made.length).to.be.at.least(2);
      expect(made.every((c) => c.project === 'test-project' && c.location === 'us-east5' && c.model === 'claude-sonnet-4-5@20250929')).to.equal(true);
      expect(JSON.stringify(made[1]!.body.messages)).to.include(SECRET_LINE);
      expect(vertex.refusedTokens).to.deep.equal([]);
      await proxy.drain();
      const deadline = Date.now() + 10_000;
      while ((await moneyOf(cp.deps, key)).entries < before + made.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect((await moneyOf(cp.deps, key)).entries).to.equal(before + made.length);
    });
  });
}
