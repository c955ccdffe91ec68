import { expect } from 'chai';
import { retryOnConcurrencyConflict } from '../../../control-plane/db/retry-conflicts.js';

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

/** A function that throws the given errors in turn, then answers 'done'; counts its runs. */
function failing(...errors: Error[]) {
  const f = async () => {
    f.runs++;
    const err = errors.shift();
    if (err) throw err;
    return 'done';
  };
  f.runs = 0;
  return f;
}

describe('retryOnConcurrencyConflict', () => {
  it('runs a statement again after a deadlock or a serialization failure and answers its result', async () => {
    const f = failing(sqlError('40P01'), sqlError('40001'));
    expect(await retryOnConcurrencyConflict(f, 3, 1)).to.equal('done');
    expect(f.runs).to.equal(3);
  });

  it('gives up after the bounded number of runs, throwing the last conflict', async () => {
    const f = failing(sqlError('40P01'), sqlError('40P01'), sqlError('40P01'), sqlError('40P01'));
    const err = await retryOnConcurrencyConflict(f, 3, 1).catch((e: unknown) => e);
    expect(err).to.have.property('code', '40P01');
    expect(f.runs).to.equal(3);
  });

  it('does not retry any other failure', async () => {
    const f = failing(sqlError('23505'));
    const err = await retryOnConcurrencyConflict(f, 3, 1).catch((e: unknown) => e);
    expect(err).to.have.property('code', '23505');
    expect(f.runs).to.equal(1);
  });
});
