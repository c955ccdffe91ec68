import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { seedOrg } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import { startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { browserInstalled, CHROMIUM_PATH, launchBrowser, openConsole, screenshot, PHONE, DESKTOP, type ConsolePage } from '../../support/browser.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';

/** "Why did my agent stop": the Refusals page after real refusals of three reasons, at desktop and phone widths. */
describeEachStore('web console: the Refusals page', (store) => {
  let browser: Browser;
  let dp: DataPlane;
  let org: BootstrapResult;

  before(async function () {
    this.timeout(90_000);
    if (!browserInstalled() && !process.env.CI) {
      skipped(`browser tests of "web console: the Refusals page [${store.name}]"`, `no Chromium at ${CHROMIUM_PATH}`);
      this.skip();
    }
    browser = await launchBrowser();
    dp = await startDataPlane(store);
    org = await seedOrg(dp.cp.deps);
    const token = org.console_token;
    const base = dp.cp.url;
    await ok(`${base}/v1/workspaces/${org.workspace_id}/credits`, { token, body: { amount_usd: 20 } });
    const team = await ok(`${base}/v1/workspaces/${org.workspace_id}/teams`, { token, body: { name: 'Agents' } }, 201);
    await ok(`${base}/v1/teams/${team.id}/models`, { token, method: 'PUT', body: { models: ['tg/sonnet'] } });
    const agent = await ok(
      `${base}/v1/teams/${team.id}/keys`,
      { token, body: { kind: 'team', name: 'nightly-agent', rpm: 2, budget_usd: 0.004 } },
      201,
    );
    const call = (body: unknown, format: 'chat' | 'messages' = 'chat') => edgeCall(dp.proxy.url, format, org.workspace_slug, agent.key, body);
    expect((await call(modelBody('chat', { max_tokens: 64 }))).status).to.equal(200);
    // What is left of the $0.004 budget (less than $0.0039 after the call above) cannot pay the input and
    // the minimum output a call may be lowered to (256 tokens of tg/sonnet at $15/Mtok, $0.00384): refused.
    expect((await call(modelBody('messages', { max_tokens: 64_000 }), 'messages')).status).to.equal(402);
    for (let i = 0; i < 4; i++) expect((await call(modelBody('chat'))).status).to.equal(429);
    // A model the key's team may not use is refused before the rate limit is asked.
    expect((await call(modelBody('chat', { model: 'tg/haiku' }))).status).to.equal(403);
    await dp.proxy.drain();
  });

  after(async () => {
    await browser?.close();
    await dp?.close();
  });

  async function signedIn(viewport: typeof DESKTOP): Promise<ConsolePage> {
    const c = await openConsole(browser, dp.cp.url, viewport);
    await c.page.goto('/');
    await c.page.getByLabel('Console token').fill(org.console_token);
    await c.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await c.page.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
    return c;
  }

  it('names each reason with its count and what to do, the key and model refused, and the latest refusals', async function () {
    this.timeout(60_000);
    const c = await signedIn(DESKTOP);
    try {
      await c.page.getByRole('navigation').getByRole('link', { name: 'Refusals', exact: true }).click();
      await c.page.getByRole('heading', { level: 1, name: 'Refusals' }).waitFor();
      await c.page.locator('#refusal-log tbody tr').first().waitFor();
      expect(await c.page.locator('#refusal-reasons h2').innerText()).to.equal('6 calls refused');
      const reasons = await c.page
        .locator('#refusal-reasons li')
        .evaluateAll((els) => els.map((el) => [el.getAttribute('data-reason'), el.querySelector('.reason-count')?.textContent]));
      expect(reasons).to.deep.equal([
        ['rate_limit', '4'],
        ['budget', '1'],
        ['model_access', '1'],
      ]);
      expect(await c.page.locator('#refusal-reasons').innerText()).to.include("Raise the key's budget");
      expect(await c.page.locator('#refusals-by-key').innerText())
        .to.include('nightly-agent')
        .and.include('6');
      expect(await c.page.locator('#refusals-by-model').innerText())
        .to.include('tg/sonnet')
        .and.include('tg/haiku');
      const log = await c.page.locator('#refusal-log tbody').innerText();
      // Badges are set in capitals by the style sheet; the words are what matter.
      for (const badge of ['429 rate limit', '402 key budget', '403 model access']) expect(log.toLowerCase()).to.include(badge);
      const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).to.be.at.most(0);
      await screenshot(c.page, `${store.name}-refusals-desktop`);
      // The Usage page counts them apart and links here.
      await c.page.getByRole('navigation').getByRole('link', { name: 'Usage', exact: true }).click();
      await c.page.locator('#usage-totals [data-total="refused"]').waitFor();
      expect(await c.page.locator('#usage-totals [data-total="refused"]').innerText()).to.equal('6');
      expect(await c.page.locator('#usage-totals [data-total="requests"]').innerText()).to.equal('1');
      expect(await c.page.locator('#request-log tbody').innerText()).to.include('refused: Rate limit ×4');
      expect(c.problems).to.deep.equal([]);
    } finally {
      await c.context.close();
    }
  });

  it('at 390 px the Refusals page has no sideways scrolling', async function () {
    this.timeout(60_000);
    const c = await signedIn(PHONE);
    try {
      await c.page.goto('/#/refusals');
      await c.page.locator('#refusal-log tbody tr').first().waitFor();
      const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).to.be.at.most(0);
      await screenshot(c.page, `${store.name}-refusals-phone`);
      expect(c.problems).to.deep.equal([]);
    } finally {
      await c.context.close();
    }
  });
});
