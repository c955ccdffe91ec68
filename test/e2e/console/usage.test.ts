import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { seedOrg } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import { startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import { browserInstalled, CHROMIUM_PATH, launchBrowser, openConsole, screenshot, PHONE, type ConsolePage } from '../../support/browser.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { priceUsage } from '../../../shared/pricing.js';

/** The console's money format (dom.js usd), restated: the page must show the API's totals this way. */
function usd(n: number): string {
  return n.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
}

/** Money in the page's tables and totals: cents (the exact figure is on hover). */
function cents(n: number): string {
  if (n > 0 && n < 0.005) return '<$0.01';
  return n.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

describeEachStore('web console: the Usage page', (store) => {
  let browser: Browser;
  let dp: DataPlane;
  let org: BootstrapResult;
  let admin: ConsolePage;
  let page: Page;
  let usageUrl: string;

  before(async function () {
    this.timeout(90_000);
    if (!browserInstalled() && !process.env.CI) {
      skipped(`browser tests of "web console: the Usage page [${store.name}]"`, `no Chromium at ${CHROMIUM_PATH}`);
      this.skip();
    }
    browser = await launchBrowser();
    dp = await startDataPlane(store);
    org = await seedOrg(dp.cp.deps);
    const token = org.console_token;
    const base = dp.cp.url;
    await ok(`${base}/v1/workspaces/${org.workspace_id}/credits`, { token, body: { amount_usd: 20 } });
    const team = await ok(`${base}/v1/workspaces/${org.workspace_id}/teams`, { token, body: { name: 'Platform' } }, 201);
    await ok(`${base}/v1/teams/${team.id}/models`, { token, method: 'PUT', body: { models: ['tg/sonnet', 'tg/haiku'] } });
    const key = await ok(`${base}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 5 } }, 201);
    // Real traffic on both formats and two models, and one call the provider refuses.
    for (const [format, model] of [
      ['chat', 'tg/sonnet'],
      ['messages', 'tg/sonnet'],
      ['messages', 'tg/haiku'],
      ['chat', 'tg/haiku'],
    ] as const) {
      expect((await edgeCall(dp.proxy.url, format, org.workspace_slug, key.key, modelBody(format, { model }))).status).to.equal(200);
    }
    dp.fake.enqueue({ kind: 'error', status: 529 });
    expect((await edgeCall(dp.proxy.url, 'chat', org.workspace_slug, key.key, modelBody('chat'))).status).to.equal(529);
    await dp.proxy.drain();
    // A prompt-cached Messages call as the settlement API records it: uncached input, cache reads and writes, what caching saved.
    const cached = priceUsage(
      { inputTokens: 2000, cacheReadTokens: 80000, cacheWrite5mTokens: 3000, cacheWrite1hTokens: 0, outputTokens: 5, webSearchRequests: 0 },
      { input_usd_per_mtok: 3, output_usd_per_mtok: 15 },
      'messages',
    );
    await recordUsage(dp.cp.deps, [
      {
        request_id: `req_cached_${store.name}_${Date.now()}`,
        key_id: key.id,
        model: 'tg/sonnet',
        input_tokens: 2000,
        output_tokens: 5,
        cost_micros: 41_325,
        format: 'messages',
        status: 200,
        latency_ms: 900,
        cache_read_tokens: 80000,
        cache_write_tokens: 3000,
        cost_femtos: String(cached.costFemtos),
        cache_saved_femtos: String(cached.savedFemtos),
      },
    ]);
    usageUrl = `${base}/v1/workspaces/${org.workspace_id}/usage`;
    admin = await openConsole(browser, base);
    page = admin.page;
    await page.goto('/');
    await page.getByLabel('Console token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await dp?.close();
  });

  beforeEach(function () {
    this.currentTest?.timeout(60_000);
  });

  afterEach(async function () {
    if (!admin) return;
    if (this.currentTest?.state === 'failed') await screenshot(page, `${store.name}-usage-failed`).catch(() => undefined);
    const text = await page.evaluate(() => document.body.innerText).catch(() => '');
    expect(text, 'page text').to.not.match(/\bnull\b|\bundefined\b|\bNaN\b|\[object /);
    expect(admin.problems.splice(0), 'errors in the page').to.deep.equal([]);
  });

  async function totals(): Promise<Record<string, string>> {
    const cells = page.locator('#usage-totals dd');
    await cells.first().waitFor();
    const out: Record<string, string> = {};
    for (const cell of await cells.all()) out[(await cell.getAttribute('data-total'))!] = (await cell.innerText()).trim();
    return out;
  }

  it('after real traffic on both formats, shows the API’s totals, a spend chart with data, top keys and the request log', async () => {
    const api = await ok(usageUrl, { token: org.console_token });
    await page.getByRole('navigation').getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    expect(await totals()).to.deep.equal({
      spend: cents(api.totals.spend_usd),
      requests: '6',
      input: api.totals.input_tokens.toLocaleString('en-US'),
      cache: '80,000 / 3,000',
      output: api.totals.output_tokens.toLocaleString('en-US'),
      'cache-saved': cents(api.totals.cache_saved_usd),
      errors: '1',
      refused: '0',
    });
    expect(api.totals.cache_saved_usd).to.equal(0.21375);
    expect(api.totals.spend_usd).to.be.greaterThan(0.041325).and.lessThan(0.06);
    expect(await page.locator('#usage-totals [data-total="spend"]').innerText()).to.not.equal('$0.00');
    expect(await page.locator('#usage-totals [data-total="spend"] span').getAttribute('title')).to.equal(`Exactly ${usd(api.totals.spend_usd)}`);
    expect(await page.locator('#spend-chart svg rect').count()).to.be.greaterThan(0);
    expect(await page.locator('#spend-chart .legend li').allInnerTexts()).to.have.members(['tg/haiku', 'tg/sonnet']);
    expect(await page.locator('#requests-chart svg rect.errors').count()).to.equal(1);
    expect(await page.locator('#top-keys li').count()).to.equal(1);
    expect(await page.locator('#request-log tbody tr').count()).to.equal(6);
    expect(await page.locator('#request-log tbody').innerText())
      .to.include('cache 80,000 read · 3,000 written')
      .and.include('saved $0.21')
      .and.include('Messages')
      .and.include('Chat')
      .and.include('529');
    await screenshot(page, `${store.name}-usage-desktop`);
  });

  it('filters change it: one model, then grouping by key', async () => {
    await page.getByLabel('Model', { exact: true }).selectOption('tg/haiku');
    await page.waitForURL(/model=tg%2Fhaiku/);
    await page.waitForFunction(() => document.querySelector('#usage-totals [data-total="requests"]')?.textContent === '2');
    const api = await ok(`${usageUrl}?model=tg/haiku`, { token: org.console_token });
    expect((await totals()).spend).to.equal(cents(api.totals.spend_usd));
    expect(await page.locator('#request-log tbody tr').count()).to.equal(2);
    await page.getByLabel('Group by').selectOption('key');
    await page.waitForURL(/group_by=key/);
    await page.locator('#spend-chart .legend li').first().waitFor();
    expect((await page.locator('#spend-chart .legend li').allInnerTexts())[0]).to.match(/^ci \(tgk_/);
  });

  it('the CSV downloads hold what the API answers', async () => {
    for (const [link, money] of [
      ['#csv-summary', 'spend_usd'],
      ['#csv-requests', 'cost_usd'],
    ] as const) {
      const href = (await page.locator(link).getAttribute('href'))!;
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator(link).click()]);
      const { createReadStream } = await import('node:fs');
      let text = '';
      for await (const chunk of createReadStream((await download.path())!)) text += chunk.toString();
      const fromApi = await (await fetch(`${dp.cp.url}${href}`, { headers: { authorization: `Bearer ${org.console_token}` } })).text();
      expect(text).to.equal(fromApi);
      const [header, ...lines] = text.trimEnd().split('\r\n');
      expect(lines.length, link).to.be.greaterThan(0);
      expect(header).to.include(money);
    }
  });

  it('keys show spend against their budget as a bar; the workspace warns of a low balance, and only then', async () => {
    await page.goto('/#/keys');
    await page.locator('progress.budget-bar').first().waitFor();
    const value = Number(await page.locator('progress.budget-bar').first().getAttribute('value'));
    expect(value).to.be.greaterThan(0).and.at.most(1);
    await page.goto('/#/overview');
    await page.locator('#balance').waitFor();
    const ws = await ok(`${dp.cp.url}/v1/workspaces/${org.workspace_id}`, { token: org.console_token });
    // The headline reads in cents; the exact balance is on hover.
    expect(await page.locator('#balance').innerText()).to.equal(`$${ws.balance_usd.toFixed(2)}`);
    expect(await page.locator('#balance').getAttribute('title')).to.equal(`Exactly ${usd(ws.balance_usd)}`);
    // $20 against a few sub-cent calls: plenty left, no warning.
    expect(await page.locator('#low-balance').isHidden()).to.equal(true);

    // Another org with fifty cents: the workspace page warns before keys are refused.
    const poor = await seedOrg(dp.cp.deps);
    await ok(`${dp.cp.url}/v1/workspaces/${poor.workspace_id}/credits`, { token: poor.console_token, body: { amount_usd: 0.5 } });
    const other = await openConsole(browser, dp.cp.url);
    try {
      await other.page.goto('/');
      await other.page.getByLabel('Console token').fill(poor.console_token);
      await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await other.page.locator('#low-balance').waitFor();
      expect(await other.page.locator('#low-balance').innerText()).to.equal(
        'Low balance: less than $1.00 left. Add credits before keys start being refused.',
      );
      expect(await other.page.locator('#balance').innerText()).to.equal('$0.50');
      expect(other.problems).to.deep.equal([]);
    } finally {
      await other.context.close();
    }
  });

  it('at 390 px the Usage page has no sideways scrolling', async () => {
    const phone = await openConsole(browser, dp.cp.url, PHONE);
    try {
      await phone.page.goto('/');
      await phone.page.getByLabel('Console token').fill(org.console_token);
      await phone.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await phone.page.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
      await phone.page.goto('/#/usage');
      await phone.page.locator('#request-log').waitFor();
      const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).to.be.at.most(0);
      await screenshot(phone.page, `${store.name}-usage-phone`);
      expect(phone.problems).to.deep.equal([]);
    } finally {
      await phone.context.close();
    }
  });
});
