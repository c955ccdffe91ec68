import { expect } from 'chai';
import { constants, createHash, sign, X509Certificate, type KeyObject, createPrivateKey } from 'node:crypto';
import { certificateAssertionProblem } from '../../support/fake-clouds/entra-assertion.js';
import { selfSignedLoopback } from '../../support/fake-clouds/self-signed.js';

const AUDIENCE = 'https://login.example/tenant/oauth2/v2.0/token';
const CLIENT = 'app-id';

/** A client assertion as MSAL makes one (PS256, `x5t#S256`), signed by `key`, naming `cert`'s thumbprint. */
function assertion(cert: X509Certificate, key: KeyObject, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: 'PS256', 'x5t#S256': createHash('sha256').update(cert.raw).digest('base64url') };
  const payload = { aud: AUDIENCE, iss: CLIENT, sub: CLIENT, nbf: now, exp: now + 600, jti: 'j', ...claims };
  const signed = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(signed), {
    key,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return `${signed}.${signature.toString('base64url')}`;
}

/** The fake Entra's check of a certificate's client assertion: what it takes and, one by one, what it refuses. */
describe('fake Entra: certificate client assertions', () => {
  const mine = selfSignedLoopback();
  const other = selfSignedLoopback();
  const cert = new X509Certificate(mine.cert);
  const key = createPrivateKey(mine.key);

  it("takes an assertion the registered certificate's key signed for this token endpoint and app", () => {
    expect(certificateAssertionProblem(assertion(cert, key), cert, CLIENT, AUDIENCE)).to.equal(undefined);
  });

  it("refuses another key's signature under the registered certificate's thumbprint", () => {
    expect(certificateAssertionProblem(assertion(cert, createPrivateKey(other.key)), cert, CLIENT, AUDIENCE)).to.equal(
      'the client assertion contains an invalid signature',
    );
  });

  it('refuses a certificate the app does not have, another audience, another app, an expired assertion', () => {
    const otherCert = new X509Certificate(other.cert);
    expect(certificateAssertionProblem(assertion(otherCert, createPrivateKey(other.key)), cert, CLIENT, AUDIENCE)).to.match(/not registered/);
    expect(certificateAssertionProblem(assertion(cert, key, { aud: 'https://elsewhere/token' }), cert, CLIENT, AUDIENCE)).to.match(/aud/);
    expect(certificateAssertionProblem(assertion(cert, key, { iss: 'x', sub: 'x' }), cert, CLIENT, AUDIENCE)).to.match(/client id/);
    expect(certificateAssertionProblem(assertion(cert, key, { exp: 1 }), cert, CLIENT, AUDIENCE)).to.match(/expired/);
  });
});
