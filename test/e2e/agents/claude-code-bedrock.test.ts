import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { runProcess, type RunResult } from '../../support/capture/clients.js';
import { TEST_MODELS_FILE } from '../../support/control-plane.js';
import { describeEachStore } from '../../support/stores.js';
import { startFakeBedrock, type FakeBedrock } from '../../support/fake-bedrock/index.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

const ROOT = join(import.meta.dirname, '../../..');
const ALIAS = 'tg/claude-direct';
const SECRET_LINE = 'the bedrock test file says 41c9e2';
const IDENTITY = { accessKeyId: 'AKIDCLAUDECODE', secretAccessKey: 'claude/code+secret' };

/** Claude Code's cloud modes, as an organization may have set them before Tollgate: each sends that cloud's requests to Tollgate's route for it. */
const MODES = {
  bedrock: (base: string) => ({
    CLAUDE_CODE_USE_BEDROCK: '1',
    ANTHROPIC_BEDROCK_BASE_URL: `${base}/bedrock`,
    CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1',
    AWS_REGION: 'us-east-1',
  }),
  // Vertex mode names its models by Vertex's ids unless told: the alias is given as both.
  vertex: (base: string) => ({
    CLAUDE_CODE_USE_VERTEX: '1',
    ANTHROPIC_VERTEX_BASE_URL: `${base}/vertex/v1`,
    CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
    ANTHROPIC_VERTEX_PROJECT_ID: 'developer-project',
    CLOUD_ML_REGION: 'us-east5',
    ANTHROPIC_MODEL: ALIAS,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: ALIAS,
  }),
};

/**
 * The real Claude Code binary in its Bedrock mode (`CLAUDE_CODE_USE_BEDROCK`,
 * `ANTHROPIC_BEDROCK_BASE_URL` at Tollgate, `CLAUDE_CODE_SKIP_BEDROCK_AUTH`,
 * the Tollgate key as `ANTHROPIC_AUTH_TOKEN`), sending its own Bedrock model
 * ids, which the alias's `client_names` take; the alias is served by a plain
 * Anthropic provider or by Bedrock. And, across clouds, its Vertex mode on the
 * Bedrock provider. A tool round trip each, billed on the key.
 */
const CASES = [
  { mode: 'bedrock', behind: 'anthropic' },
  { mode: 'bedrock', behind: 'bedrock' },
  { mode: 'vertex', behind: 'bedrock' },
] as const;
for (const { mode, behind } of CASES) {
  describeEachStore(
    `Claude Code in ${mode === 'bedrock' ? 'Bedrock' : 'Vertex'} mode, through Tollgate to ${behind === 'bedrock' ? 'a Bedrock' : 'an Anthropic'} provider`,
    (store) => {
      let dp: DataPlane;
      let k: SeededKey;
      let tmp: string;
      let work: string;
      let bedrock: FakeBedrock | undefined;
      const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

      before(async () => {
        tmp = mkdtempSync(join(tmpdir(), 'tollgate-claude-bedrock-'));
        const file = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, unknown>; models: Record<string, unknown>[] };
        for (const m of file.models)
          if (m.alias === ALIAS) m.client_names = ['us.anthropic.claude-*', 'global.anthropic.claude-*', 'anthropic.claude-*'];
        if (behind === 'bedrock') {
          bedrock = await startFakeBedrock({ identities: [IDENTITY] });
          Object.assign(process.env, { AWS_ACCESS_KEY_ID: IDENTITY.accessKeyId, AWS_SECRET_ACCESS_KEY: IDENTITY.secretAccessKey });
          file.providers.bedrock = { kind: 'bedrock', region: 'us-east-1', endpoint_url: bedrock.url };
          for (const m of file.models)
            if (m.alias === ALIAS) Object.assign(m, { provider: 'bedrock', upstream_model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' });
        }
        writeFileSync(join(tmp, 'models.json'), JSON.stringify(file));
        dp = await startDataPlane(store, { env: { MODELS_FILE: join(tmp, 'models.json') } });
        k = await seedKey(dp.cp.deps, { models: [ALIAS] });
        work = join(tmp, 'work');
        mkdirSync(work);
        writeFileSync(join(work, 'notes.txt'), `${SECRET_LINE}\n`);
      });
      after(async () => {
        await dp?.close();
        await bedrock?.close();
        rmSync(tmp, { recursive: true, force: true });
        for (const [name, value] of [
          ['AWS_ACCESS_KEY_ID', saved.id],
          ['AWS_SECRET_ACCESS_KEY', saved.secret],
        ] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      });

      /** The provider's model calls, whichever the suite has: each with its body. */
      function providerCalls(): unknown[] {
        if (bedrock) return bedrock.requests.map((r) => r.body);
        return dp.fake.requests.filter((r) => r.path === '/anthropic/v1/messages').map((r) => r.body);
      }

      function claude(prompt: string): Promise<RunResult> {
        return runProcess(
          join(ROOT, 'node_modules/.bin/claude'),
          ['-p', prompt],
          {
            HOME: tmp,
            CLAUDE_CONFIG_DIR: join(tmp, '.claude'),
            ...MODES[mode](`${dp.proxy.url}/${k.slug}`),
            ANTHROPIC_AUTH_TOKEN: k.secret,
            DISABLE_TELEMETRY: '1',
            DISABLE_AUTOUPDATER: '1',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          },
          work,
          150_000,
        );
      }

      it('runs a tool round trip: the provider asks for Read, Claude Code reads the file and sends it back, then answers; billed on the key', async function () {
        this.timeout(180_000);
        const read = [{ name: 'Read', input: { file_path: join(work, 'notes.txt') } }];
        if (bedrock)
          bedrock.enqueue({ kind: 'ok', tools: read }, ...Array.from({ length: 8 }, () => ({ kind: 'ok' as const, tools: 'none' as const })));
        else {
          dp.fake.reset();
          dp.fake.enqueue({ kind: 'ok', tools: read });
        }
        const run = await claude('What does notes.txt say?');
        expect(run.exit, run.stderr || run.stdout).to.equal(0);
        expect(run.stdout).to.match(/tok1 tok2/);
        const calls = providerCalls();
        expect(calls.length).to.be.at.least(2);
        expect(JSON.stringify(calls)).to.include(SECRET_LINE);
        await dp.proxy.drain();
        expect((await moneyOf(dp.cp.deps, k)).entries).to.be.at.least(2);
        const models = await dp.cp.deps.db.query<{ model: string }>(
          `SELECT DISTINCT model FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
          [k.keyId],
        );
        expect(models.map((r) => r.model)).to.deep.equal([ALIAS]);
      });
    },
  );
}
