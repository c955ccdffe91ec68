import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg } from '../../support/control-plane.js';
import { addMember } from '../../support/console.js';
import { seedKey } from '../../support/data-plane.js';
import { DEPLOYMENT_ALIASES, startDeploymentPlane, type DeploymentPlane } from '../../support/deployment-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { launchOrSkip, openConsole, screenshot, signInTo, PHONE, type ConsolePage } from '../../support/browser.js';

describeEachStore('web console: the Models page shows each deployment and its state', (store) => {
  let browser: Browser;
  let dp: DeploymentPlane;
  const opened: ConsolePage[] = [];

  before(async function () {
    this.timeout(60_000);
    browser = await launchOrSkip(this, `web console: the Models page [${store.name}]`);
    dp = await startDeploymentPlane(store, { env: { PROXY_DEPLOYMENT_FAILURES: '2', PROXY_DEPLOYMENT_COOLDOWN_MS: '20000' } });
  });

  after(async () => {
    for (const c of opened) await c.context.close();
    await browser?.close();
    await dp?.close();
  });

  async function signIn(token: string, viewport?: { width: number; height: number }): Promise<Page> {
    const c = await openConsole(browser, dp.cp.url, viewport);
    opened.push(c);
    await signInTo(c.page, token, 'Models', 'Models');
    expect(c.problems).to.deep.equal([]);
    return c.page;
  }

  it('an admin sees a cooling deployment and an open circuit with when they come back; a member sees prices only', async function () {
    this.timeout(60_000);
    const k = await seedKey(dp.cp.deps, { models: DEPLOYMENT_ALIASES });
    const call = (alias: string) => edgeCall(dp.proxies[0]!.url, 'chat', k.slug, k.secret, modelBody('chat', { model: alias }));
    dp.fakes.a.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '600' } });
    await call('tg/health-1');
    dp.fakes.a.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 502 });
    await call('tg/health-2');
    await call('tg/health-2');
    await dp.proxies[0]!.reportDeployments();

    const org = await seedOrg(dp.cp.deps);
    for (const [name, viewport] of [
      ['desktop', undefined],
      ['phone', PHONE],
    ] as const) {
      const page = await signIn(org.console_token, viewport);
      const row = (alias: string, id: string) => page.locator(`li[data-deployment="${alias} ${id}"]`);
      await row('tg/health-1', 'a/health-1-a').waitFor();
      const cooling = await row('tg/health-1', 'a/health-1-a').innerText();
      expect(cooling)
        .to.include('Cooling down')
        .and.to.match(/back in rotation at .*\(in (9|10) min\)/);
      expect(await row('tg/health-1', 'b/health-1-b').innerText()).to.include('Healthy');
      const open = await row('tg/health-2', 'a/health-2-a').innerText();
      expect(open)
        .to.include('Circuit open')
        .and.to.include('2 failures in a row')
        .and.to.match(/one probe call at .*\(in (1\d|20) s\)/);
      const card = await page.locator('#model-deployments').innerText();
      expect(card).to.match(/As the proxy reports it, the latest \d+ s ago/);
      expect(card).to.include(
        'deployments are out of rotation or being probed: a/health-1-a (tg/health-1, cooling down), a/health-2-a (tg/health-2, circuit open).',
      );
      expect(card).to.match(/^2 of \d+ deployments/m);
      expect(await page.locator('tr[data-model="tg/with-fallback"]').innerText()).to.include('then tg/forbidden, tg/fallback');
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).to.not.match(/\bnull\b|\bundefined\b|\bNaN\b|\[object /);
      await screenshot(page, `${store.name}-models-${name}`);
    }

    const member = await addMember(dp.cp.deps, org.org_id);
    const page = await signIn(member.token);
    await page.getByRole('cell', { name: 'tg/health-1', exact: true }).waitFor();
    expect(await page.locator('#model-deployments').count()).to.equal(0);
    expect(await page.locator('main').innerText()).to.include('$3.00');
  });
});
