import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/processes.js';

/** Every file and directory under `dir` whose mode lets another account in, relative to `dir`. */
function openToOthers(dir: string, from = dir): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (statSync(full).mode & 0o077) found.push(`${full.slice(from.length + 1)} 0${(statSync(full).mode & 0o777).toString(8)}`);
    if (entry.isDirectory()) found.push(...openToOthers(full, from));
  }
  return found;
}

/** `npm start` as a real process on the embedded store, until it says it runs; then SIGTERM. Resolves with its output. */
async function startOnce(dataDir: string): Promise<string> {
  const env = {
    PATH: process.env.PATH,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    CONTROL_PLANE_PORT: String(await freePort()),
    PROXY_PORT: String(await freePort()),
    METRICS_ENABLED: 'false',
    MODELS_FILE: 'test/fixtures/models.test.json',
    LOG_LEVEL: 'warn',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('Tollgate is running') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  child.kill('SIGTERM');
  await exited;
  expect(out, out).to.include('Tollgate is running');
  return out;
}

describe("ops: the embedded store is the server account's only", function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a fresh DATA_DIR is created 0700 and every file the store writes is 0600 (no file or directory open to others)', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'tollgate-modes-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data');
    await startOnce(dataDir);
    expect(statSync(dataDir).mode & 0o777).to.equal(0o700);
    const files = readdirSync(dataDir, { recursive: true });
    expect(files.length).to.be.above(100);
    expect(openToOthers(dataDir)).to.deep.equal([]);
  });

  it('an existing DATA_DIR open to others is tightened to 0700 at start, with a warning', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-modes-'));
    dirs.push(dataDir);
    chmodSync(dataDir, 0o755);
    mkdirSync(join(dataDir, 'old'), { mode: 0o755 });
    writeFileSync(join(dataDir, 'old', 'note'), 'x', { mode: 0o644 });
    const out = await startOnce(dataDir);
    expect(statSync(dataDir).mode & 0o777).to.equal(0o700);
    expect(out).to.match(/DATA_DIR was open to other accounts; set to 0700/);
  });
});
