import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../../support/capture/clients.js';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The real Gemini CLI, headless (`gemini -p`), unchanged: API-key auth chosen
 * in its settings file, `GEMINI_API_KEY` a Tollgate key and
 * `GOOGLE_GEMINI_BASE_URL` the workspace's base. The provider (the fake)
 * asks for `read_file` once; the CLI runs it and sends the file back; the
 * answer is text. On a Gemini provider, a Chat-only one and a Messages-only
 * one, every model call billed on the key.
 */
describeEachStore('e2e: the Gemini CLI through Tollgate', (store) => {
  let dp: DataPlane;
  let key: SeededKey;
  let tmp: string;

  before(async () => {
    dp = await startDataPlane(store);
    key = await seedKey(dp.cp.deps, { models: ['tg/gemini-direct', 'tg/gpt-direct', 'tg/claude-direct'] });
  });
  after(() => dp.close());
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'gemini-cli-'));
    mkdirSync(join(tmp, '.gemini'));
    mkdirSync(join(tmp, 'work'));
    writeFileSync(join(tmp, 'work', 'hello.txt'), 'hello from the file\n');
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    };
    writeFileSync(join(tmp, '.gemini', 'settings.json'), JSON.stringify(settings));
    dp.fake.reset();
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  for (const alias of ['tg/gemini-direct', 'tg/gpt-direct', 'tg/claude-direct']) {
    it(`${alias}: gemini -p reads a file through its read_file tool and answers, billed on the key`, async function () {
      this.timeout(180_000);
      const before = await moneyOf(dp.cp.deps, key);
      dp.fake.enqueue(
        { kind: 'ok', tools: [{ name: 'read_file', input: { file_path: join(tmp, 'work', 'hello.txt') } }] },
        { kind: 'ok', tools: 'none' },
      );
      const run = await runProcess(
        join(root, 'node_modules/.bin/gemini'),
        ['-p', 'read hello.txt', '-m', alias],
        { HOME: tmp, GEMINI_API_KEY: key.secret, GOOGLE_GEMINI_BASE_URL: `${dp.proxy.url}/${key.slug}`, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
        join(tmp, 'work'),
        150_000,
      );
      expect(run.exit, run.stderr).to.equal(0);
      expect(run.stdout).to.include('tok1 tok2');
      const calls = dp.fake.requests.filter((r) => r.method === 'POST');
      expect(calls.length).to.be.at.least(2);
      // The file's text reached the provider, in the provider's own format.
      expect(JSON.stringify(calls[1]!.body)).to.include('hello from the file');
      await dp.proxy.drain();
      const after = await moneyOf(dp.cp.deps, key);
      expect(after.entries - before.entries).to.equal(calls.length);
      expect(after.spend).to.be.greaterThan(before.spend);
    });
  }
});
