import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rawRequest } from './helpers.js';

/** Starts `main.ts` with `args` on a free port; resolves with the child and the URL it printed. */
async function startRunner(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/fake-upstream/main.ts', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const match = /fake upstream listening on (http:\/\/\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
  });
  return { child, url };
}

const CALL = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('fake upstream: standalone runner', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints where it listens, answers with the chosen default, and exits 0 on SIGTERM', async () => {
    const started = await startRunner(['--output-tokens', '3']);
    child = started.child;
    expect(started.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await rawRequest(started.url, 'POST', '/v1/chat/completions', { authorization: 'Bearer k' }, CALL);
    expect(JSON.parse(res.text).choices[0].message.content).to.equal('tok1 tok2 tok3');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).to.equal(0);
  });

  it('answers a call without a provider key, so the README walk-through needs none', async () => {
    const started = await startRunner([]);
    child = started.child;
    const chat = await rawRequest(started.url, 'POST', '/v1/chat/completions', {}, CALL);
    expect(chat.status).to.equal(200);
    const messages = await rawRequest(
      started.url,
      'POST',
      '/anthropic/v1/messages',
      { 'anthropic-version': '2023-06-01' },
      { ...CALL, max_tokens: 8 },
    );
    expect(messages.status).to.equal(200);
  });

  it('refuses a call without a provider key with 401 under --require-key, as a real provider does', async () => {
    const started = await startRunner(['--require-key']);
    child = started.child;
    const res = await rawRequest(started.url, 'POST', '/v1/chat/completions', {}, CALL);
    expect(res.status).to.equal(401);
  });
});
