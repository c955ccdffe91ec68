import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { call, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { CLAUDE_CODE_UA, seedSigninOrg, signIn } from '../../support/gateway-signin.js';
import { launchOrSkip, openConsole, screenshot, signInTo, PHONE, type ConsolePage } from '../../support/browser.js';

describeEachStore('web console: Claude Code devices per member, and the sign-in team and budget', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;
  const opened: ConsolePage[] = [];
  // The store's clock runs ahead by whole poll intervals, so a device signs in without waiting 5 s.
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };

  before(async function () {
    this.timeout(60_000);
    browser = await launchOrSkip(this, `web console: devices [${store.name}]`);
    cp = await startTestControlPlane(store.db, { clock });
  });

  after(async () => {
    for (const c of opened) await c.context.close();
    await browser?.close();
    await cp?.close();
  });

  async function shot(page: Page, name: string): Promise<void> {
    const text = await page.evaluate(() => document.body.innerText);
    expect(text, `text of ${name}`).to.not.match(/\bnull\b|\bundefined\b|\bNaN\b|Invalid Date|\[object /);
    await screenshot(page, `${store.name}-devices-${name}`);
  }

  async function confirm(page: Page, button: string): Promise<void> {
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: button }).click();
    await dialog.waitFor({ state: 'hidden' });
  }

  for (const [name, viewport] of [
    ['desktop', undefined],
    ['phone', PHONE],
  ] as const) {
    it(`${name}: Members → Devices lists each sign-in with its client and last use; Sign out ends one, Sign out all the rest, each audited`, async function () {
      this.timeout(60_000);
      const { org } = await seedSigninOrg(cp);
      const passInterval = () => void (offsetMs += 5000);
      await signIn(cp, org.console_token, passInterval);
      await signIn(cp, org.console_token, passInterval);
      // One device has made calls: the proxy's usage reports stamp its key's last use.
      await cp.deps.db.query(
        `UPDATE api_keys SET last_used_at = $2 WHERE id = (SELECT id FROM api_keys WHERE gateway_session_id IS NOT NULL AND org_id = $1 ORDER BY created_at LIMIT 1)`,
        [org.org_id, clock.now()],
      );

      const c = await openConsole(browser, cp.url, viewport);
      opened.push(c);
      const page = c.page;
      await signInTo(page, org.console_token, 'Members', 'Members');
      await page.getByRole('link', { name: /^Devices of / }).click();
      await page.getByRole('heading', { level: 1, name: /^Devices of / }).waitFor();
      const rows = page.locator('tr[data-device]');
      await rows.nth(1).waitFor();
      expect(await rows.count()).to.equal(2);
      const text = await page.locator('table').innerText();
      expect(text.split(CLAUDE_CODE_UA).length - 1).to.equal(2);
      expect(text).to.include('never');
      await page.getByRole('heading', { level: 2, name: '2 signed in' }).waitFor();
      await shot(page, `list-${name}`);

      await rows
        .first()
        .getByRole('button', { name: /^Sign out / })
        .click();
      await shot(page, `confirm-${name}`);
      await confirm(page, 'Sign out device');
      await page.getByRole('heading', { level: 2, name: /^1 signed in · 1 ended/ }).waitFor();
      await page.getByRole('button', { name: 'Sign out all devices' }).click();
      await confirm(page, 'Sign out all devices');
      await page.getByRole('heading', { level: 2, name: /^0 signed in · 2 ended/ }).waitFor();
      expect(await page.locator('tr[data-device]', { hasText: 'revoked' }).count()).to.equal(2);
      await shot(page, `ended-${name}`);
      // The audit log says it in words.
      await page.getByRole('navigation').getByRole('link', { name: 'Audit log', exact: true }).click();
      await page.getByText(`Claude Code device signed in (${CLAUDE_CODE_UA})`).first().waitFor();
      expect(await page.getByText(`Claude Code device signed in (${CLAUDE_CODE_UA})`).count()).to.equal(2);
      expect(await page.getByText(/^Claude Code device of .+ signed out$/).count()).to.equal(2);
      await shot(page, `audit-${name}`);
      expect(c.problems).to.deep.equal([]);

      const audit = await call(`${cp.url}/v1/orgs/${org.org_id}/audit?action=gateway_session.`, { token: org.console_token });
      const actions = (audit.body.items ?? audit.body).map((e: { action: string }) => e.action).sort();
      expect(actions).to.deep.equal(['gateway_session.revoke', 'gateway_session.revoke', 'gateway_session.sign_in', 'gateway_session.sign_in']);
    });

    it(`${name}: Settings → SSO sets the team and per-device budget signed-in developers get`, async function () {
      this.timeout(60_000);
      const { org, teamId } = await seedSigninOrg(cp, 25);
      const c = await openConsole(browser, cp.url, viewport);
      opened.push(c);
      const page = c.page;
      await signInTo(page, org.console_token, 'SSO', 'Single sign-on');
      const team = page.getByLabel('Team of signed-in developers');
      await team.waitFor();
      expect(await team.inputValue()).to.equal(teamId);
      const budget = page.getByLabel('Budget per device (USD)');
      expect(await budget.inputValue()).to.equal('25');
      await budget.fill('40');
      await page.getByRole('button', { name: 'Save sign-in settings' }).click();
      await page.getByText('Claude Code sign-in settings saved.').waitFor();
      await shot(page, `settings-${name}`);
      const saved = await call(`${cp.url}/v1/orgs/${org.org_id}/claude-code-signin`, { token: org.console_token });
      expect(saved.body).to.deep.include({ team_id: teamId, budget_usd: 40 });
      expect(c.problems).to.deep.equal([]);
    });
  }
});
