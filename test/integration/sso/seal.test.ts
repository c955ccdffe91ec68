import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SealError, seal, unseal } from '../../../shared/seal.js';
import { ConfigError, parseSecretsKey } from '../../../shared/config.js';
import { testConfig } from '../../support/control-plane.js';

describe('sso: sealing secrets (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and two seals of one value differ (fresh nonce)', () => {
    const a = seal(key, 'client-secret', 'org-1');
    const b = seal(key, 'client-secret', 'org-1');
    expect(a).not.to.equal(b);
    expect(a).not.to.include('client-secret');
    expect(unseal(key, a, 'org-1')).to.equal('client-secret');
  });

  it('refuses another key, another context (a value copied to another org), and any altered byte', () => {
    const sealed = seal(key, 'client-secret', 'org-1');
    expect(() => unseal(randomBytes(32), sealed, 'org-1')).to.throw(SealError);
    expect(() => unseal(key, sealed, 'org-2')).to.throw(SealError);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expect(() => unseal(key, [...parts.slice(0, 3), ct.toString('base64url')].join('.'), 'org-1')).to.throw(SealError);
    expect(() => unseal(key, 'plaintext', 'org-1')).to.throw(SealError);
  });

  it('SECRETS_KEY is read as 64 hex digits or base64/base64url of 32 bytes; anything else is a config error naming it', () => {
    const raw = randomBytes(32);
    expect(parseSecretsKey(raw.toString('hex'))!.equals(raw)).to.equal(true);
    expect(parseSecretsKey(raw.toString('base64'))!.equals(raw)).to.equal(true);
    expect(parseSecretsKey(raw.toString('base64url'))!.equals(raw)).to.equal(true);
    expect(parseSecretsKey(undefined)).to.equal(undefined);
    expect(parseSecretsKey(randomBytes(31).toString('base64'))).to.equal(null);
    expect(parseSecretsKey('correct horse battery staple')).to.equal(null);
    expect(() => testConfig({ SECRETS_KEY: 'too-short' })).to.throw(ConfigError, /SECRETS_KEY/);
  });
});
