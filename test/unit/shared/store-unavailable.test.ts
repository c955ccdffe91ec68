import { expect } from 'chai';
import pg from 'pg';
import { AppError, isStoreUnavailable, toStoreAwareError } from '../../../shared/errors.js';
import { freePort } from '../../support/processes.js';

describe('a database that cannot be reached is a 503, not a 500', () => {
  it('a refused connection, as pg raises it, is unavailable with retry-after', async () => {
    const client = new pg.Client({ connectionString: `postgres://postgres@localhost:${await freePort()}/none`, connectionTimeoutMillis: 2000 });
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(err)).to.equal(true);
    const answer = toStoreAwareError(err);
    expect([answer.status, answer.headers['retry-after'], answer.expose]).to.deep.equal([503, '2', true]);
  });

  it('a server shutting down or starting, and a connection lost mid-query, are unavailable', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08003'])
      expect(isStoreUnavailable(Object.assign(new Error('x'), { code })), code).to.equal(true);
    expect(isStoreUnavailable(new Error('Connection terminated unexpectedly'))).to.equal(true);
    expect(isStoreUnavailable(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }))).to.equal(true);
  });

  it('a query the database refused stays what it was: a constraint is not an outage', () => {
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    expect(isStoreUnavailable(unique)).to.equal(false);
    expect(toStoreAwareError(unique).status).to.equal(500);
    expect(toStoreAwareError(new AppError('conflict', 'taken')).status).to.equal(409);
  });
});
