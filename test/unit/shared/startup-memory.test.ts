import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs `code` (an ES module) in a fresh node with tsx and returns what it printed as JSON. */
async function inFreshNode(code: string): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('start-up memory', () => {
  it('gives back the young generation start-up grew, without making gc a global', async () => {
    const seen = await inFreshNode(`
      import { getHeapSpaceStatistics } from 'node:v8';
      import { releaseStartupMemory } from './shared/startup-memory.ts';
      const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size;
      // Objects that live a while and then die, as start-up makes: the young generation grows to hold them.
      const ring = new Array(100_000);
      for (let i = 0; i < 1_000_000; i++) ring[i % ring.length] = { i, text: 'x'.repeat(i % 64) };
      ring.fill(undefined);
      const before = young();
      releaseStartupMemory();
      console.log(JSON.stringify({ before, after: young(), gcGlobal: typeof globalThis.gc }));
    `);
    expect(seen.before, 'the young generation grew first').to.be.above(4 * 1024 * 1024);
    expect(seen.after).to.be.below((seen.before as number) / 4);
    expect(seen.gcGlobal).to.equal('undefined');
  });

  it("loading the proxy and the metrics listener leaves Node's bundled undici unloaded", async () => {
    const seen = await inFreshNode(`
      await import('./proxy/runtime.ts');
      await import('./shared/metrics.ts');
      console.log(JSON.stringify({ loaded: process.moduleLoadList.filter((m) => m.includes('deps/undici')) }));
    `);
    expect(seen.loaded).to.deep.equal([]);
  });
});
