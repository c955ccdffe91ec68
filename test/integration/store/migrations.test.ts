import { expect } from 'chai';
import { migrate } from '../../../control-plane/db/migrate.js';
import { describeEachStore } from '../../support/stores.js';

describeEachStore('migrations', (store) => {
  it('applies nothing the second time', async () => {
    expect(await migrate(store.db)).to.deep.equal([]);
  });

  it('records every migration file', async () => {
    const rows = await store.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    expect(rows.map((r) => r.name)).to.include('001_initial.sql');
  });
});
