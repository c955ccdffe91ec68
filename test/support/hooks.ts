import { closeTestStores } from './stores.js';
import { reportSkips } from './skips.js';

/** Mocha root hooks: tear down shared stores and say what was skipped. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await closeTestStores();
    reportSkips();
  },
};
