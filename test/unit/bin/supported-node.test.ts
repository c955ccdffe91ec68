import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LAUNCHER = join(ROOT, 'bin/supported-node.sh');
const script = readFileSync(LAUNCHER, 'utf8');
const pinned = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(script)?.[1] ?? '';
const NODE_NEEDED = pinned('NODE_NEEDED');
const NODE_WANTED = pinned('NODE_WANTED');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; scripts: Record<string, string> };

const atLeast = (found: string, needed: string) => {
  const [a, b] = [found, needed].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! > b![i]!;
  return true;
};

/**
 * A directory whose `node` claims `version` (what the launcher asks it), so
 * the machine's old node is played without installing one. Placed first on
 * a PATH that still has the system tools (sh, uname, dirname).
 */
function oldNodeOnPath(dir: string, version: string): string {
  const bin = join(dir, 'old-node-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'node'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(join(bin, 'node'), 0o755);
  return `${bin}:/usr/bin:/bin`;
}

function launch(args: string[], env: Record<string, string>) {
  const started = performance.now();
  const r = spawnSync('/bin/sh', [LAUNCHER, ...args], { cwd: ROOT, env: { HOME: tmpdir(), ...env }, encoding: 'utf8', timeout: 10_000 });
  return { ...r, ms: performance.now() - started };
}

describe('bin/supported-node.sh: every npm script runs on a supported Node', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-node-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("needs what package.json's engines says, and fetches a version that satisfies it", () => {
    expect(pkg.engines.node).to.equal(`>=${NODE_NEEDED}`);
    expect(atLeast(NODE_WANTED, NODE_NEEDED)).to.equal(true);
  });

  it('is the first thing every script and pre-hook runs, so none starts on an old node', () => {
    for (const [name, line] of Object.entries(pkg.scripts)) {
      // Sourced: everything after it on the line runs in the same shell, with its PATH.
      if (line.startsWith('. bin/supported-node.sh && ')) continue;
      // Run by path: it execs the one command it is given (no `&&` that would run outside it).
      expect(line, name).to.match(/^sh bin\/supported-node\.sh [^&;|]+$/);
    }
  });

  it('sourced, it puts the supported Node first on PATH for the rest of the line', function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    const cached = join(dir, 'cache', 'tollgate', `node-${NODE_WANTED}`, 'bin');
    mkdirSync(cached, { recursive: true });
    symlinkSync(process.execPath, join(cached, 'node'));
    const r = spawnSync('/bin/sh', ['-c', '. bin/supported-node.sh && node -p process.versions.node && echo "$#"', 'sh', 'stray'], {
      cwd: ROOT,
      env: { HOME: tmpdir(), PATH: oldNodeOnPath(dir, '20.20.2'), XDG_CACHE_HOME: join(dir, 'cache'), npm_config_globalconfig: '/dev/null' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(r.status, r.stderr).to.equal(0);
    // The caller's own arguments are not taken for a command to exec.
    expect(r.stdout.trim().split('\n')).to.deep.equal([process.versions.node, '1']);
  });

  it('this test itself runs on a supported Node (npm test started it through the launcher)', () => {
    expect(atLeast(process.versions.node, NODE_NEEDED), process.version).to.equal(true);
  });

  it('runs the command as it is on a supported node', () => {
    const r = launch(['node', '-p', 'process.version'], { PATH: `${join(process.execPath, '..')}:/usr/bin:/bin` });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(process.version);
    expect(r.stderr).to.equal('');
  });

  it('an old node with fetching turned off: one line naming the node found and needed and how to get it, within a second', () => {
    const r = launch(['node', '-e', 'process.exit(0)'], { PATH: oldNodeOnPath(dir, '20.20.2'), TOLLGATE_FETCH_NODE: '0' });
    expect(r.status).to.equal(1);
    expect(r.stdout).to.equal('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include('Node 20.20.2 found at').and.include(`needs Node.js >= ${NODE_NEEDED}`).and.include('https://nodejs.org/');
    expect(r.ms).to.be.below(1000);
  });

  it('no node at all: one line, exit 1', () => {
    const r = launch(['true'], { PATH: '/nonexistent' });
    expect(r.status).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.include('no working node on PATH').and.include(`>= ${NODE_NEEDED}`);
  });

  it('an old node: the command runs on the fetched Node, first on PATH for everything it starts', function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    // The fetched Node already in the cache (the fetch itself is the clean-clone CI step's: .ci/readme-on-old-node).
    const cached = join(dir, 'cache', 'tollgate', `node-${NODE_WANTED}`, 'bin');
    mkdirSync(cached, { recursive: true });
    symlinkSync(process.execPath, join(cached, 'node'));
    const r = launch(['sh', '-c', 'node -p "process.versions.node + \' \' + process.env.NODE"'], {
      PATH: oldNodeOnPath(dir, '18.20.0'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      npm_config_globalconfig: '/dev/null',
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(`${process.versions.node} ${join(cached, 'node')}`);
    expect(r.stderr).to.include(`running on Node ${NODE_WANTED}`).and.include('Node 18.20.0 found').and.include('TOLLGATE_FETCH_NODE=0');
  });
});
