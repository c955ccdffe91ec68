import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { seedAnotherKey, seedKey } from '../../support/data-plane.js';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { launchOrSkip, openConsole, screenshot, signInTo, DESKTOP, PHONE } from '../../support/browser.js';

describeEachStore("web console: the Usage page's top keys show a period budget's figures", (store) => {
  let browser: Browser;
  let cp: TestControlPlane;

  before(async function () {
    this.timeout(60_000);
    browser = await launchOrSkip(this, `web console: usage periods [${store.name}]`);
    cp = await startTestControlPlane(store.db);
  });

  after(async () => {
    await browser?.close();
    await cp?.close();
  });

  for (const [name, viewport] of [
    ['1280', DESKTOP],
    ['390', PHONE],
  ] as const) {
    it(`${name} px: a monthly key shows this month's spend of its budget and when it resets; a lifetime key shows no period; nothing wider than the screen`, async function () {
      this.timeout(60_000);
      const monthly = await seedKey(cp.deps, { budgetUsd: 25, budgetPeriod: 'month' });
      const lifetime = await seedAnotherKey(cp.deps, monthly, { budgetUsd: 5 });
      await cp.deps.db.query(`UPDATE api_keys SET name = 'lifetime key' WHERE id = $1`, [lifetime.keyId]);
      const report = (keyId: string, costMicros: number) => ({
        request_id: `req_${randomUUID().replace(/-/g, '')}`,
        key_id: keyId,
        model: 'tg/sonnet',
        input_tokens: 1,
        output_tokens: 1,
        cost_micros: costMicros,
      });
      await recordUsage(cp.deps, [report(monthly.keyId, 1_500_000), report(lifetime.keyId, 500_000)]);

      const c = await openConsole(browser, cp.url, viewport);
      try {
        await signInTo(c.page, monthly.consoleToken, 'Usage', 'Usage');
        const top = c.page.locator('#top-keys li');
        await top.first().waitFor();
        const monthlyRow = await top.filter({ hasText: 'test key' }).innerText();
        expect(monthlyRow).to.match(/\$1\.50 of \$25\.00 this month · resets /);
        expect(await top.filter({ hasText: 'lifetime key' }).innerText()).to.not.match(/this month|resets/);
        const wide = await c.page.evaluate(() =>
          Array.from(document.querySelectorAll('body *'))
            .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
            .map((el) => `${el.tagName}.${el.className}`),
        );
        expect(wide, 'elements wider than the viewport').to.deep.equal([]);
        // A wrapped period line once ran into the next key's name at 390 px: each line ends inside its own row.
        const spill = await c.page.evaluate(() =>
          Array.from(document.querySelectorAll('#top-keys li .period'))
            .filter(
              (el) =>
                el.scrollHeight > el.clientHeight + 1 || el.getBoundingClientRect().bottom > el.closest('li')!.getBoundingClientRect().bottom + 0.5,
            )
            .map((el) => el.textContent),
        );
        expect(spill, 'period lines running past their row').to.deep.equal([]);
        await screenshot(c.page, `${store.name}-usage-periods-${name}`);
        expect(c.problems).to.deep.equal([]);
      } finally {
        await c.context.close();
      }
    });
  }
});
