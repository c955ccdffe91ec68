import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('node:http through require', () => {
  it("loading the proxy and the metrics listener leaves Node's bundled undici unloaded", async () => {
    const code = `
      await import('./proxy/runtime.ts');
      await import('./shared/metrics.ts');
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('deps/undici'))));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT });
    expect(JSON.parse(stdout)).to.deep.equal([]);
  });

  it('an ES module import of node:http would load it (what the rule guards against)', async () => {
    const code = `await import('node:http'); console.log(JSON.stringify(process.moduleLoadList.some((m) => m.includes('deps/undici'))));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT });
    expect(JSON.parse(stdout)).to.equal(true);
  });
});
