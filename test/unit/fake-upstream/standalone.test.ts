import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rawRequest } from './helpers.js';

describe('fake upstream: standalone runner', () => {
  it('prints where it listens, answers with the chosen default, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [
      '--import', 'tsx', 'test/support/fake-upstream/main.ts', '--port', '0', '--output-tokens', '3',
    ], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          const match = /fake upstream listening on (http:\/\/\S+)\n/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await rawRequest(url, 'POST', '/v1/chat/completions', { authorization: 'Bearer k' }, {
        model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }],
      });
      expect(JSON.parse(res.text).choices[0].message.content).to.equal('tok1 tok2 tok3');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
