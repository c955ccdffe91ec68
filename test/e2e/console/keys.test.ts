import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { seedKey } from '../../support/data-plane.js';
import { launchOrSkip, openConsole, screenshot, signInTo, PHONE, type ConsolePage } from '../../support/browser.js';
import { api_key_find_by_id } from '../../../control-plane/stores/api-keys.js';

describeEachStore('web console: a key over time (period budget, the key dialog, rotate)', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;
  const opened: ConsolePage[] = [];

  before(async function () {
    this.timeout(60_000);
    browser = await launchOrSkip(this, `web console: keys over time [${store.name}]`);
    cp = await startTestControlPlane(store.db);
  });

  after(async () => {
    for (const c of opened) await c.context.close();
    await browser?.close();
    await cp?.close();
  });

  async function shot(page: Page, name: string): Promise<void> {
    const text = await page.evaluate(() => document.body.innerText);
    expect(text, `text of ${name}`).to.not.match(/\bnull\b|\bundefined\b|\bNaN\b|\[object /);
    await screenshot(page, `${store.name}-keys-${name}`);
  }

  for (const [name, viewport] of [
    ['desktop', undefined],
    ['phone', PHONE],
  ] as const) {
    it(`${name}: the list shows this month's spend and when it resets; Edit changes the budget; Rotate shows the new key once and the old one's end`, async function () {
      this.timeout(60_000);
      const k = await seedKey(cp.deps, { budgetUsd: 25, budgetPeriod: 'month' });
      const c = await openConsole(browser, cp.url, viewport);
      opened.push(c);
      const page = c.page;
      await signInTo(page, k.consoleToken, 'API keys', 'API keys');
      const row = page.locator('tr', { hasText: 'test key' });
      await row.waitFor();
      expect(await row.innerText())
        .to.match(/of \$25\.00 \/ month/)
        .and.to.include('resets');
      await shot(page, `period-budget-${name}`);

      await page.getByRole('button', { name: 'Edit key test key' }).click();
      const dialog = page.locator('dialog');
      await dialog.getByLabel('Budget (USD)').fill('40');
      await dialog.getByLabel('Budget applies').selectOption('week');
      await shot(page, `dialog-${name}`);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page.locator('tr', { hasText: '/ week' }).waitFor();
      const saved = await api_key_find_by_id(cp.deps.db, k.keyId);
      expect(saved).to.include({ budget_usd: 40, budget_period: 'week' });

      await page.getByRole('button', { name: 'Rotate key test key' }).click();
      await dialog.getByRole('button', { name: 'Rotate key' }).click();
      await dialog.getByText('It will not be shown again').waitFor();
      expect(await dialog.innerText()).to.match(/works until .+, then stops everywhere/);
      await shot(page, `rotated-${name}`);
      expect(c.problems).to.deep.equal([]);
    });
  }
});
