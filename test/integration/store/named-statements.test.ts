import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';

/** The `name` query option, as the settlement uses it, on each driver. */
describeEachStore('store driver: named statements', (store) => {
  const SQL = `SELECT n, $2::text AS label FROM unnest($1::int[]) AS n ORDER BY n`;

  beforeEach(async () => {
    await store.db.exec(`CREATE TABLE IF NOT EXISTS named_probe (id int PRIMARY KEY)`);
    await store.db.exec(`DELETE FROM named_probe`);
  });

  it('answers rows with arrays and nulls parsed, run after run', async () => {
    for (const label of ['a', null]) {
      const rows = await store.db.query<{ n: number; label: string | null }>(SQL, [[3, 1, 2], label], { name: 'named_probe_select' });
      expect(rows).to.deep.equal([1, 2, 3].map((n) => ({ n, label })));
    }
    const arrays = await store.db.query<{ ids: string[] }>(`SELECT array_agg(x ORDER BY x) AS ids FROM unnest($1::text[]) AS x`, [['b', 'a,"c']], {
      name: 'named_probe_array',
    });
    expect(arrays[0]!.ids).to.deep.equal(['a,"c', 'b']);
  });

  it('raises the database error (with its SQLSTATE) and leaves the connection usable', async () => {
    const insert = `INSERT INTO named_probe (id) SELECT unnest($1::int[])`;
    await store.db.query(insert, [[1]], { name: 'named_probe_insert' });
    let error: unknown;
    await store.db.query(insert, [[2, 1]], { name: 'named_probe_insert' }).catch((err: unknown) => (error = err));
    expect(error).to.have.property('code', '23505');
    await store.db.query(insert, [[3]], { name: 'named_probe_insert' });
    const rows = await store.db.query<{ id: number }>(`SELECT id FROM named_probe ORDER BY id`);
    expect(rows.map((r) => r.id)).to.deep.equal([1, 3]);
  });

  it('runs inside a transaction: rolled back with it, and other callers wait for it', async () => {
    const insert = `INSERT INTO named_probe (id) SELECT unnest($1::int[])`;
    let inserted = false;
    const outside = (async () => {
      // Issued while the transaction is open: it must not run inside that transaction.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.db.query(insert, [[20]], { name: 'named_probe_insert' });
    })();
    await store.db
      .transaction(async (tx) => {
        await tx.query(insert, [[10]], { name: 'named_probe_insert' });
        inserted = true;
        await new Promise((resolve) => setTimeout(resolve, 30));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await outside;
    expect(inserted).to.equal(true);
    const rows = await store.db.query<{ id: number }>(`SELECT id FROM named_probe ORDER BY id`);
    expect(rows.map((r) => r.id)).to.deep.equal([20]);
  });

  it('refuses a name already given to another statement', async () => {
    await store.db.query(`SELECT 1 AS one`, [], { name: 'named_probe_once' });
    let error: unknown;
    await store.db.query(`SELECT 2 AS two`, [], { name: 'named_probe_once' }).catch((err: unknown) => (error = err));
    expect(error).to.be.an('error');
  });
});
