import { expect } from 'chai';
import { displayPrefix, generateSecret, isWellFormedSecret, lastFour, safeEqual, sha256Hex } from '../../../shared/secrets.js';

describe('secrets', () => {
  it('generates keys with the brand prefix, 40 characters, that pass their own checksum', () => {
    const key = generateSecret('apiKey');
    expect(key).to.match(/^tgk_[0-9A-Za-z]{36}$/);
    expect(isWellFormedSecret(key, 'apiKey')).to.equal(true);
  });

  it('never repeats a secret across 10,000 draws', () => {
    const seen = new Set(Array.from({ length: 10_000 }, () => generateSecret('apiKey')));
    expect(seen.size).to.equal(10_000);
  });

  it('rejects a key with one character changed (checksum)', () => {
    const key = generateSecret('apiKey');
    const i = 10;
    const flipped = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
    expect(isWellFormedSecret(flipped, 'apiKey')).to.equal(false);
  });

  it('rejects the wrong kind, truncation and non-base62 characters', () => {
    const key = generateSecret('apiKey');
    expect(isWellFormedSecret(key, 'scimToken')).to.equal(false);
    expect(isWellFormedSecret(key.slice(0, -1), 'apiKey')).to.equal(false);
    expect(isWellFormedSecret(`${key.slice(0, -1)}!`, 'apiKey')).to.equal(false);
    expect(isWellFormedSecret('', 'apiKey')).to.equal(false);
  });

  it('shows only a prefix and the last four characters', () => {
    const key = generateSecret('scimToken');
    expect(displayPrefix(key)).to.equal(key.slice(0, 10));
    expect(lastFour(key)).to.equal(key.slice(-4));
  });

  it('hashes with SHA-256 hex and compares safely', () => {
    expect(sha256Hex('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(safeEqual('same', 'same')).to.equal(true);
    expect(safeEqual('same', 'diff')).to.equal(false);
    expect(safeEqual('short', 'longer value')).to.equal(false);
  });
});
