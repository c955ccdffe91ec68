import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs `code` as an ES module in a fresh node (`nodeArgs` before it) and returns which of Node's bundled undici modules it loaded. */
async function bundledUndiciAfter(code: string, nodeArgs: string[] = []): Promise<string[]> {
  const report = `console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('deps/undici'))));`;
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs, '--input-type=module', '-e', `${code}\n${report}`], { cwd: ROOT });
  return JSON.parse(stdout) as string[];
}

describe('node:http through require', () => {
  it("loading the proxy and the metrics listener leaves Node's bundled undici unloaded", async () => {
    const loaded = await bundledUndiciAfter(`await import('./proxy/runtime.ts'); await import('./shared/metrics.ts');`, ['--import', 'tsx']);
    expect(loaded).to.deep.equal([]);
  });

  it('an ES module import of node:http would load it (what the rule guards against)', async () => {
    expect(await bundledUndiciAfter(`await import('node:http');`)).to.not.be.empty;
  });
});
