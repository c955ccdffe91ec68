import { expect } from 'chai';
import { createBearerToken, CredentialsUnavailable, type MintedToken } from '../../../../proxy/upstream-auth/bearer-token.js';
import { capturedLog } from '../../../support/log-lines.js';

/** A mint whose answers the test releases one by one, counting how often it was asked. */
function scriptedMint() {
  const pending: { resolve: (t: MintedToken) => void; reject: (e: unknown) => void }[] = [];
  return {
    pending,
    get asked() {
      return pending.length;
    },
    mint: () => new Promise<MintedToken>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

describe('a cloud bearer token', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('is minted once for calls that arrive together', async () => {
    const m = scriptedMint();
    const source = createBearerToken({ provider: 'vertex', mint: m.mint, log: capturedLog().log, now });
    const calls = [source.token(), source.token(), source.token()];
    await Promise.resolve();
    expect(m.asked).to.equal(1);
    m.pending[0]!.resolve({ token: 'one', expiresAtMs: clock + 3_600_000 });
    expect(await Promise.all(calls)).to.deep.equal(['one', 'one', 'one']);
  });

  it('is refreshed in the background before it expires, calls meanwhile getting the old one without waiting', async () => {
    const m = scriptedMint();
    const source = createBearerToken({ provider: 'vertex', mint: m.mint, log: capturedLog().log, now });
    const first = source.token();
    m.pending[0]!.resolve({ token: 'one', expiresAtMs: clock + 3_600_000 });
    expect(await first).to.equal('one');
    clock += 3_600_000 - 5 * 60_000 - 1; // just before the refresh point: no mint
    expect(await source.token()).to.equal('one');
    expect(m.asked).to.equal(1);
    clock += 2; // inside the last five minutes: the old token still serves while the next is minted
    expect(await source.token()).to.equal('one');
    expect(m.asked).to.equal(2);
    m.pending[1]!.resolve({ token: 'two', expiresAtMs: clock + 3_600_000 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await source.token()).to.equal('two');
    expect(m.asked).to.equal(2);
  });

  it('refreshes a short-lived token at half its life, and never sends one in its last tenth', async () => {
    const m = scriptedMint();
    const source = createBearerToken({ provider: 'entra', mint: m.mint, log: capturedLog().log, now });
    const first = source.token();
    m.pending[0]!.resolve({ token: 'short', expiresAtMs: clock + 10_000 });
    await first;
    clock += 5_000;
    expect(await source.token()).to.equal('short');
    expect(m.asked).to.equal(2, 'half-life reached: a refresh started');
    m.pending[1]!.reject(new Error('login host down'));
    await new Promise((resolve) => setImmediate(resolve));
    clock += 4_100; // 0.9 s left: too close to expiry to send
    const waiting = source.token();
    await Promise.resolve();
    expect(m.asked).to.equal(3);
    m.pending[2]!.resolve({ token: 'fresh', expiresAtMs: clock + 10_000 });
    expect(await waiting).to.equal('fresh');
  });

  it("follows the cloud's own refresh time when it gives one", async () => {
    const m = scriptedMint();
    const source = createBearerToken({ provider: 'entra', mint: m.mint, log: capturedLog().log, now });
    const first = source.token();
    m.pending[0]!.resolve({ token: 'one', expiresAtMs: clock + 3_600_000, refreshAtMs: clock + 1_800_000 });
    await first;
    clock += 1_800_000;
    await source.token();
    expect(m.asked).to.equal(2);
  });

  it('fails as a 503 naming the provider, logged once per episode rather than per call, and says when it recovered', async () => {
    const m = scriptedMint();
    const captured = capturedLog();
    const source = createBearerToken({ provider: 'vertex-prod', mint: m.mint, log: captured.log, now });
    for (let i = 0; i < 3; i++) {
      const call = source.token();
      await Promise.resolve();
      m.pending[i]!.reject(new CredentialsUnavailable('vertex-prod', 'GOOGLE_APPLICATION_CREDENTIALS names /nope, which cannot be read'));
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(CredentialsUnavailable);
      expect((err as CredentialsUnavailable).status).to.equal(503);
      expect((err as CredentialsUnavailable).expose).to.equal(true);
      expect((err as CredentialsUnavailable).message).to.equal(
        'Provider "vertex-prod" has no usable credentials: GOOGLE_APPLICATION_CREDENTIALS names /nope, which cannot be read.',
      );
    }
    expect(captured.lines.filter((l) => l.level === 40)).to.have.length(1);
    const recovered = source.token();
    await Promise.resolve();
    m.pending[3]!.resolve({ token: 'ok', expiresAtMs: clock + 3_600_000 });
    expect(await recovered).to.equal('ok');
    expect(captured.lines.map((l) => l.msg)).to.include('upstream credentials recovered');
  });

  it("logs a library failure's message only, never the request it carried", async () => {
    const captured = capturedLog();
    const failure = Object.assign(new Error('invalid_grant: Invalid JWT Signature.'), { config: { data: 'assertion=eyJhbGciOi.secret-assertion' } });
    const source = createBearerToken({ provider: 'vertex', mint: () => Promise.reject(failure), log: captured.log, now });
    const err = await source.token().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('Provider "vertex" has no usable credentials: the token request failed.');
    expect(captured.text()).to.include('invalid_grant: Invalid JWT Signature.');
    expect(captured.text()).not.to.include('secret-assertion');
  });
});
