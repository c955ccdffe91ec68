import { expect } from 'chai';
import { generateSecret, sha256Hex } from '../../../../shared/secrets.js';
import { AppError } from '../../../../shared/errors.js';
import { checkKey } from '../../../../proxy/edge/steps/key.js';
import { newCallState } from '../../../../proxy/edge/steps/step.js';
import type { ServerResponse } from 'node:http';
import type { WireFormat } from '../../../../proxy/call.js';
import { fakeDeps, fakeRequest, fakeTiming, resolvedKey, type FakeAnswers } from './fakes.js';

const SECRET = generateSecret('apiKey');

function run(headers: Record<string, string>, answers: FakeAnswers = {}, format: WireFormat = 'chat', slug = 'acme') {
  const { deps, asked } = fakeDeps(answers);
  const s = newCallState(fakeRequest(headers), {} as ServerResponse, { format, slug, action: 'call' }, fakeTiming());
  return { s, asked, out: checkKey(s, deps) };
}

describe('edge step key: the caller is known before its body is read', () => {
  it('401 without a lookup when no key, a malformed key, or two different keys are presented', () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer tg_short' },
      { authorization: `Bearer ${SECRET}`, 'x-api-key': generateSecret('apiKey') },
    ]) {
      const { out, asked, s } = run(headers);
      expect(out).to.be.instanceOf(AppError);
      expect((out as AppError).status).to.equal(401);
      expect(asked.lookups).to.deep.equal([]);
      expect(s.key).to.equal(undefined);
    }
  });

  it('answers at once (no promise) from the cache and writes the key and the lookup stamps', () => {
    const key = resolvedKey();
    const { out, s } = run({ authorization: `Bearer ${SECRET}` }, { cached: { kind: 'known', key } });
    expect(out).to.equal(undefined);
    expect(s.key).to.equal(key);
    expect(s.obs.keyStartAt).to.be.greaterThan(0);
    expect(s.obs.keyAt).to.be.at.least(s.obs.keyStartAt);
  });

  it('asks the control plane by the SHA-256 of the key on a cache miss, and waits for it', async () => {
    const key = resolvedKey();
    const { out, s, asked } = run({ authorization: `Bearer ${SECRET}` }, { lookup: { kind: 'known', key } });
    expect(out).to.be.instanceOf(Promise);
    expect(await out).to.equal(undefined);
    expect(asked.lookups).to.deep.equal([sha256Hex(SECRET)]);
    expect(s.key).to.equal(key);
  });

  it('either format takes the key as a Bearer token or as x-api-key', () => {
    const key = resolvedKey();
    for (const format of ['chat', 'messages'] as const) {
      for (const headers of [{ 'x-api-key': SECRET }, { authorization: `Bearer ${SECRET}` }] as Record<string, string>[]) {
        expect(run(headers, { cached: { kind: 'known', key } }, format).out).to.equal(undefined);
      }
    }
  });

  it('401 for an unknown key, a key of another workspace, or a revoked one', async () => {
    const unknown = await run({ authorization: `Bearer ${SECRET}` }, { lookup: { kind: 'unknown' } }).out;
    expect((unknown as AppError).status).to.equal(401);
    const other = run({ authorization: `Bearer ${SECRET}` }, { cached: { kind: 'known', key: resolvedKey() } }, 'chat', 'elsewhere').out;
    expect((other as AppError).status).to.equal(401);
    const revoked = run({ authorization: `Bearer ${SECRET}` }, { cached: { kind: 'known', key: resolvedKey({ revoked: true }) } }).out;
    expect((revoked as AppError).status).to.equal(401);
  });

  it('503 (thrown, not answered as a refusal) when the key cannot be checked', async () => {
    expect(() => run({ authorization: `Bearer ${SECRET}` }, { cached: { kind: 'unavailable' } }))
      .to.throw(AppError)
      .with.property('status', 503);
    const err = await (run({ authorization: `Bearer ${SECRET}` }, { lookup: { kind: 'unavailable' } }).out as Promise<unknown>).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AppError).with.property('status', 503);
  });
});
