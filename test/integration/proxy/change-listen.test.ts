import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { CHANGE_CHANNEL, change_feed_publish } from '../../../control-plane/stores/change-feed.js';

describeEachStore('control plane: LISTEN hears change_feed_publish once the change commits', (store) => {
  it('wakes the listener after commit, and not for a rolled-back change', async () => {
    let heard = 0;
    const stop = await store.db.listen!(CHANGE_CHANNEL, () => heard++);
    try {
      await store.db
        .transaction(async (tx) => {
          await change_feed_publish(tx, 'key', '00000000-0000-0000-0000-000000000001');
          throw new Error('roll back');
        })
        .catch(() => undefined);
      await store.db.transaction((tx) => change_feed_publish(tx, 'key', '00000000-0000-0000-0000-000000000002'));
      for (let i = 0; i < 100 && heard === 0; i++) await new Promise((r) => setTimeout(r, 20));
      // Give a stray notification of the rolled-back change time to show up.
      await new Promise((r) => setTimeout(r, 100));
      expect(heard).to.equal(1);
    } finally {
      await stop();
    }
  });
});
