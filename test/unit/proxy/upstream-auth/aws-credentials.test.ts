import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { pino } from 'pino';
import { AppError } from '../../../../shared/errors.js';
import { createAwsCredentialSource, type AwsCredentialLoader } from '../../../../proxy/upstream-auth/aws-credentials.js';
import type { AwsCredentials } from '../../../../proxy/upstream-auth/aws-sign.js';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const MIN = 60_000;

function logSink() {
  const lines: { msg: string; level: number }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; level: number }) });
  return { log, lines };
}

/** A loader handing out numbered credentials that expire `lifetimeMs` after `now()`, or failing while `failing` is set. */
function loader(now: () => number, lifetimeMs: number | undefined) {
  const state = { calls: 0, failing: false as false | Error };
  const load: AwsCredentialLoader = async () => {
    state.calls++;
    await Promise.resolve();
    if (state.failing) throw state.failing;
    const c: AwsCredentials = { accessKeyId: `AKID${state.calls}`, secretAccessKey: `secret-${state.calls}`, sessionToken: `token-${state.calls}` };
    if (lifetimeMs !== undefined) c.expiration = new Date(now() + lifetimeMs);
    return c;
  };
  return { load, state };
}

function providerError(): Error {
  const err = new Error('Could not load credentials from any providers');
  err.name = 'CredentialsProviderError';
  return err;
}

describe('AWS credentials for a Bedrock provider', () => {
  let clock = 1_000_000;
  const now = () => clock;

  it('loads once for calls that arrive together, and keeps long-lived keys', async () => {
    const { load, state } = loader(now, undefined);
    const source = createAwsCredentialSource({ provider: 'aws', load, nowMs: now, log: logSink().log });
    const all = await Promise.all([1, 2, 3, 4, 5].map(() => source.get()));
    expect(new Set(all.map((c) => c.accessKeyId))).to.deep.equal(new Set(['AKID1']));
    clock += 24 * 60 * MIN;
    expect((await source.get()).accessKeyId).to.equal('AKID1');
    expect(state.calls).to.equal(1);
  });

  it('renews session credentials five minutes before they expire, not later', async () => {
    clock = 1_000_000;
    const { load, state } = loader(now, 15 * MIN);
    const source = createAwsCredentialSource({ provider: 'aws', load, nowMs: now, log: logSink().log });
    expect((await source.get()).accessKeyId).to.equal('AKID1');
    clock += 9 * MIN;
    expect((await source.get()).accessKeyId).to.equal('AKID1');
    clock += 1 * MIN + 1;
    expect((await source.get()).accessKeyId).to.equal('AKID2');
    expect(state.calls).to.equal(2);
  });

  it('keeps serving credentials not yet expired while a renewal fails, retrying every few seconds, and logs the episode once each way', async () => {
    clock = 1_000_000;
    const { load, state } = loader(now, 10 * MIN);
    const { log, lines } = logSink();
    const source = createAwsCredentialSource({ provider: 'aws', load, nowMs: now, log });
    await source.get();
    clock += 6 * MIN;
    state.failing = providerError();
    for (let i = 0; i < 5; i++) expect((await source.get()).accessKeyId).to.equal('AKID1');
    expect(state.calls).to.equal(2);
    clock += 11_000;
    await source.get();
    expect(state.calls).to.equal(3);
    state.failing = false;
    clock += 11_000;
    expect((await source.get()).accessKeyId).to.equal('AKID4');
    expect(lines.map((l) => l.msg)).to.deep.equal(['AWS credentials could not be loaded', 'AWS credentials are available again']);
  });

  it('answers 503 naming the provider and what is missing when no credentials are found, never a secret', async () => {
    const { load, state } = loader(now, undefined);
    state.failing = providerError();
    const { log, lines } = logSink();
    const source = createAwsCredentialSource({ provider: 'bedrock-eu', load, nowMs: now, log });
    for (let i = 0; i < 3; i++) {
      const err = await source.get().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).status).to.equal(503);
      expect((err as AppError).expose).to.equal(true);
      expect((err as AppError).message).to.equal(
        'Provider "bedrock-eu" cannot be called: no AWS credentials were found (environment, shared config files, web identity token, container or instance metadata) (CredentialsProviderError).',
      );
    }
    expect(lines).to.have.length(1);
  });

  it('answers 503 saying when the credentials expired once they did and cannot be renewed', async () => {
    clock = 1_000_000;
    const { load, state } = loader(now, 10 * MIN);
    const source = createAwsCredentialSource({ provider: 'aws', load, nowMs: now, log: logSink().log });
    const first = await source.get();
    state.failing = providerError();
    clock += 10 * MIN;
    const err = (await source.get().catch((e: unknown) => e)) as AppError;
    expect(err.status).to.equal(503);
    expect(err.message).to.include(`its AWS credentials expired at ${first.expiration!.toISOString()} and could not be renewed`);
    expect(err.message).not.to.include('secret-1');
    expect(err.message).not.to.include('token-1');
  });

  it('loads nothing of the AWS SDK until credentials are first asked for', async () => {
    const code = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith('@aws-sdk/')) seen.push(specifier); return next(specifier, context); } });
      const { standardAwsChain } = await import('./proxy/upstream-auth/aws-credentials.ts');
      await import('./proxy/upstream-auth/aws.ts');
      const chain = standardAwsChain();
      const before = seen.length;
      const credentials = await chain();
      console.log(JSON.stringify({ before, after: seen.length, id: credentials.accessKeyId }));`;
    const env = { ...process.env, AWS_ACCESS_KEY_ID: 'AKIDFROMENV', AWS_SECRET_ACCESS_KEY: 'from-env' };
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, env });
    const seen = JSON.parse(stdout) as { before: number; after: number; id: string };
    expect(seen.before).to.equal(0);
    expect(seen.after).to.be.above(0);
    expect(seen.id).to.equal('AKIDFROMENV');
  });
});
