import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { describeEachStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { browserInstalled, CHROMIUM_PATH, launchBrowser, openConsole, screenshot, PHONE, type ConsolePage } from '../../support/browser.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';

/** key.create rows written by the setup: more than one page of the audit log (50 rows). */
const KEYS_CREATED = 55;

describeEachStore('web console: usage axes, keys across teams, audit paging', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;
  let org: BootstrapResult;
  let admin: ConsolePage;
  let page: Page;
  let memberToken: string;

  before(async function () {
    this.timeout(120_000);
    if (!browserInstalled() && !process.env.CI) {
      skipped(`browser tests of "web console: usage axes, keys across teams, audit paging [${store.name}]"`, `no Chromium at ${CHROMIUM_PATH}`);
      this.skip();
    }
    browser = await launchBrowser();
    cp = await startTestControlPlane(store.db);
    org = await seedOrg(cp.deps);
    const token = org.console_token;
    const ws = `${cp.url}/v1/workspaces/${org.workspace_id}`;
    await ok(`${ws}/credits`, { token, body: { amount_usd: 69.934188 } });
    const platform = await ok(`${ws}/teams`, { token, body: { name: 'Platform' } }, 201);
    const research = await ok(`${ws}/teams`, { token, body: { name: 'Research' } }, 201);
    await ok(`${cp.url}/v1/teams/${platform.id}/models`, { token, method: 'PUT', body: { models: ['tg/sonnet'] } });
    await ok(`${cp.url}/v1/teams/${research.id}/models`, { token, method: 'PUT', body: { models: ['tg/haiku'] } });
    const ci = await ok(`${cp.url}/v1/teams/${platform.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 5 } }, 201);
    const lab = await ok(`${cp.url}/v1/teams/${research.id}/keys`, { token, body: { kind: 'team', name: 'lab-notebook' } }, 201);
    for (let i = 2; i < KEYS_CREATED; i++) {
      await ok(`${cp.url}/v1/teams/${platform.id}/keys`, { token, body: { kind: 'team', name: `batch-${String(i).padStart(2, '0')}` } }, 201);
    }
    // A member of Research only: sees Research's keys and no one else's.
    const member = await addMember(cp.deps, org.org_id, { userName: `rita+${store.name}@example.test` });
    await ok(`${cp.url}/v1/teams/${research.id}/members`, { token, body: { user_id: member.user_id } }, 204);
    memberToken = member.token;
    // One day of usage whose largest hour is $0.065812: the axis must read $0.00 … $0.08, not max and half-max.
    const report = (id: string, key: string, model: string, micros: number) => ({
      request_id: `req_${id}_${store.name}_${Date.now()}_with_a_long_tail_0123456789`,
      key_id: key,
      model,
      input_tokens: 1200,
      output_tokens: 300,
      cost_micros: micros,
    });
    await recordUsage(cp.deps, [report('a', ci.id, 'tg/sonnet', 40_000), report('b', ci.id, 'tg/sonnet', 25_812)]);
    await recordUsage(cp.deps, [report('c', lab.id, 'tg/haiku', 1_234)]);
    admin = await openConsole(browser, cp.url);
    page = admin.page;
    await signIn(page, token);
  });

  after(async () => {
    await admin?.context.close();
    await browser?.close();
    await cp?.close();
  });

  beforeEach(function () {
    this.currentTest?.timeout(60_000);
  });

  afterEach(async function () {
    if (!admin) return;
    if (this.currentTest?.state === 'failed') await screenshot(page, `${store.name}-lists-failed`).catch(() => undefined);
    const text = await page.evaluate(() => document.body.innerText).catch(() => '');
    expect(text, 'page text').to.not.match(/\bnull\b|\bundefined\b|\bNaN\b|\[object /);
    expect(admin.problems.splice(0), 'errors in the page').to.deep.equal([]);
  });

  async function signIn(p: Page, token: string): Promise<void> {
    await p.goto('/');
    await p.getByLabel('Console token').fill(token);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
  }

  it('Usage: one day of data by the hour, axes on round ticks, money in cents with the exact figure on hover', async () => {
    await page.goto('/#/usage');
    await page.locator('#spend-chart svg').waitFor();
    expect(await page.locator('#spend-chart h2').innerText()).to.equal('Spend per hour, by model');
    // Today only: the range starts at the first day with usage.
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.getByLabel('From (UTC)').inputValue()).to.equal(today);
    expect(await page.locator('#spend-chart svg rect').count()).to.be.greaterThan(0);
    expect(await page.locator('#spend-chart svg text.tick').allTextContents()).to.deep.equal(['$0.00', '$0.02', '$0.04', '$0.06', '$0.08']);
    const requestTicks = (await page.locator('#requests-chart svg text.tick').allTextContents()).map(Number);
    expect(requestTicks[0]).to.equal(0);
    for (const t of requestTicks) expect(Number.isInteger(t), `request tick ${t}`).to.equal(true);
    const spend = page.locator('#usage-totals [data-total="spend"] span');
    expect(await spend.innerText()).to.equal('$0.07');
    expect(await spend.getAttribute('title')).to.equal('Exactly $0.067046');
    // The request log fits its card: no sideways scrolling, the whole id on hover.
    const wrap = page.locator('#request-log .table-wrap');
    expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth)).to.be.at.most(0);
    const id = page.locator('#request-log td.request-id .ellipsis').first();
    expect(await id.getAttribute('title')).to.match(/^req_\w+_with_a_long_tail_0123456789$/);
    expect(await page.locator('#request-log tbody').innerText()).to.match(/<\$0\.01|\$0\.04/);
    await screenshot(page, `${store.name}-lists-usage-desktop`);
  });

  it('Keys: every team’s keys on one page, filterable by team', async () => {
    await page.goto('/#/keys');
    await page.locator('tr', { hasText: 'lab-notebook' }).waitFor();
    expect(await page.locator('h2', { hasText: 'Keys of every team' }).count()).to.equal(1);
    expect(await page.locator('tbody tr').count()).to.equal(KEYS_CREATED);
    expect(await page.locator('tr', { hasText: 'lab-notebook' }).innerText()).to.include('Research');
    expect(await page.locator('tr[data-team="Platform"]').count()).to.equal(KEYS_CREATED - 1);
    expect(await page.locator('tr[data-team="Platform"] td[data-label="Team"]').allInnerTexts()).to.satisfy((t: string[]) =>
      t.every((x) => x === 'Platform'),
    );
    await screenshot(page, `${store.name}-lists-keys-desktop`);
    await page.getByLabel('Team', { exact: true }).selectOption({ label: 'Research' });
    await page.waitForURL(/#\/keys\?team=/);
    await page.locator('h2', { hasText: 'Keys of Research' }).waitFor();
    expect(await page.locator('tbody tr').count()).to.equal(1);
    expect(await page.locator('th').allInnerTexts()).to.not.include('TEAM');
    await page.getByLabel('Team', { exact: true }).selectOption({ label: 'All teams' });
    await page.locator('h2', { hasText: 'Keys of every team' }).waitFor();
  });

  it('Keys: a member sees their own teams’ keys only', async () => {
    const member = await openConsole(browser, cp.url);
    try {
      await signIn(member.page, memberToken);
      await member.page.goto('/#/keys');
      await member.page.locator('tr', { hasText: 'lab-notebook' }).waitFor();
      expect(await member.page.locator('h2', { hasText: 'Keys of your teams' }).count()).to.equal(1);
      expect(await member.page.locator('tbody tr').count()).to.equal(1);
      expect(member.problems).to.deep.equal([]);
    } finally {
      await member.context.close();
    }
  });

  it('Audit log: pages with Load more, keeping the filter', async () => {
    await page.goto('/#/settings/audit');
    await page.locator('#audit-log tbody tr').first().waitFor();
    await page.getByLabel('Action').selectOption({ label: 'Keys' });
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#audit-log tbody tr td.mono')).every((td) => td.textContent === 'key.create'),
    );
    expect(await page.locator('#audit-log tbody tr').count()).to.equal(50);
    await page.locator('#audit-more').click();
    await page.waitForFunction((n) => document.querySelectorAll('#audit-log tbody tr').length === n, KEYS_CREATED);
    const actions = await page.locator('#audit-log tbody tr td.mono').allInnerTexts();
    expect(new Set(actions)).to.deep.equal(new Set(['key.create']));
    expect(await page.locator('#audit-more').isHidden()).to.equal(true);
    // Each key created once: no row repeated across the page boundary.
    const targets = await page.locator('#audit-log tbody tr td:last-child').allInnerTexts();
    expect(new Set(targets).size).to.equal(KEYS_CREATED);
    await screenshot(page, `${store.name}-lists-audit-desktop`);
    // Another filter starts again from the first page.
    await page.getByLabel('Action').selectOption({ label: 'Teams' });
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#audit-log tbody tr td.mono')).every((td) => td.textContent?.startsWith('team.')),
    );
    expect(await page.locator('#audit-log tbody tr').count()).to.be.lessThan(50);
    expect(await page.locator('#audit-more').isHidden()).to.equal(true);
  });

  it('workspace, teams, keys, usage and audit at 1280 and 390 px: no sideways scrolling', async () => {
    for (const [viewport, label] of [
      [undefined, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const view = await openConsole(browser, cp.url, viewport);
      try {
        await signIn(view.page, org.console_token);
        for (const [hash, name, ready] of [
          ['#/overview', 'workspace', '#balance'],
          ['#/teams', 'teams', 'tr[data-team="Research"]'],
          ['#/keys', 'keys', 'tr[data-team="Research"]'],
          ['#/usage', 'usage', '#request-log'],
          ['#/settings/audit', 'audit', '#audit-log tbody tr'],
        ] as const) {
          await view.page.goto(`/${hash}`);
          await view.page.locator(ready).first().waitFor();
          if (name === 'audit') {
            await view.page.getByLabel('Action').selectOption({ label: 'Teams' });
            await view.page.waitForFunction(() =>
              Array.from(document.querySelectorAll('#audit-log tbody tr td.mono')).every((td) => td.textContent?.startsWith('team.')),
            );
          }
          const overflow = await view.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          expect(overflow, `${name} at ${label} overflows sideways`).to.be.at.most(0);
          await screenshot(view.page, `${store.name}-lists-${label}-${name}`);
        }
        expect(view.problems).to.deep.equal([]);
      } finally {
        await view.context.close();
      }
    }
  });
});
