import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import { browserInstalled, CHROMIUM_PATH, launchBrowser, openConsole, signInTo } from '../../support/browser.js';

/** Create key starts on the team the user last created a key in, else their own: not on the alphabetically first. */
describeEachStore('web console: the team Create key starts on', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;

  before(async function () {
    this.timeout(60_000);
    if (!browserInstalled() && !process.env.CI) {
      skipped(`browser tests of "web console: the team Create key starts on [${store.name}]"`, `no Chromium at ${CHROMIUM_PATH}`);
      this.skip();
    }
    browser = await launchBrowser();
    cp = await startTestControlPlane(store.db);
  });
  after(async () => {
    await browser?.close();
    await cp?.close();
  });

  it("the user's own team first; after a key is created in another, that one", async function () {
    this.timeout(60_000);
    const org = await seedOrg(cp.deps);
    const token = org.console_token;
    const teams: Record<string, string> = {};
    for (const name of ['Alpha', 'Mine']) {
      teams[name] = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token, body: { name } }, 201)).id;
    }
    await ok(`${cp.url}/v1/teams/${teams.Mine}/members`, { token, body: { user_id: org.owner_user_id } }, 204);
    const c = await openConsole(browser, cp.url);
    try {
      await signInTo(c.page, token, 'API keys', 'API keys');
      const open = async () => {
        await c.page.getByRole('button', { name: 'Create key' }).click();
        const dialog = c.page.getByRole('dialog');
        await dialog.waitFor();
        return dialog;
      };
      let dialog = await open();
      expect(await dialog.getByLabel('For team').inputValue()).to.equal(teams.Mine);
      await dialog.getByLabel('For team').selectOption(teams.Alpha!);
      await dialog.getByLabel('Name').fill('alpha-ci');
      await dialog.getByRole('button', { name: 'Create key' }).click();
      await dialog.getByLabel('API key “alpha-ci”').waitFor();
      await dialog.getByRole('button', { name: /close/ }).click();
      await dialog.waitFor({ state: 'detached' });
      dialog = await open();
      expect(await dialog.getByLabel('For team').inputValue()).to.equal(teams.Alpha);
      expect(c.problems).to.deep.equal([]);
    } finally {
      await c.context.close();
    }
  });
});
