import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { targetPolicy } from '../../../control-plane/services/alerts/outbound-policy.js';
import { startAlertDelivery, type AlertDelivery } from '../../../control-plane/services/alerts/delivery.js';
import { guardedWebhookSend } from '../../../control-plane/services/alerts/webhook-send.js';
import { createSecretSealer } from '../../../control-plane/services/sso/secrets.js';
import { describeEachStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import { browserInstalled, CHROMIUM_PATH, launchBrowser, openConsole, screenshot, type ConsolePage } from '../../support/browser.js';

describeEachStore('web console: the Money alerts page', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;
  let admin: ConsolePage;
  let receiver: Server;
  let loop: AlertDelivery | undefined;
  const received: string[] = [];

  before(async function () {
    this.timeout(60_000);
    if (!browserInstalled() && !process.env.CI) {
      skipped(`browser tests of "web console: the Money alerts page [${store.name}]"`, `no Chromium at ${CHROMIUM_PATH}`);
      this.skip();
    }
    browser = await launchBrowser();
    cp = await startTestControlPlane(store.db, { env: { ALERTS_ALLOW_PRIVATE_URLS: 'true', ALERTS_POLL_MS: '20' } });
    receiver = createServer((req, res) => {
      received.push(String(req.headers['x-tollgate-event-id']));
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    admin = await openConsole(browser, cp.url);
  });

  after(async () => {
    await loop?.stop();
    await admin?.context.close();
    await browser?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await cp?.close();
  });

  it('sets the threshold, adds a webhook (secret once), and lists each alert with its delivery status', async function () {
    this.timeout(60_000);
    const org = await seedOrg(cp.deps);
    const token = org.console_token;
    await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/credits`, { token, body: { amount_usd: 10 } });
    const team = await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token, body: { name: 'Platform' } }, 201);
    const key = await ok(`${cp.url}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 1 } }, 201);
    const page = admin.page;
    await page.goto('/');
    await page.getByLabel('Console token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^Workspace/ }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Alerts', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Money alerts' }).waitFor();

    await page.getByLabel('Alert when the balance falls below (USD)').fill('9');
    await page.getByRole('button', { name: 'Save threshold' }).click();
    await page.locator('#toast', { hasText: 'below $9.00' }).waitFor();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await page.getByLabel('Webhook URL (https)').fill(url);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = await page.locator('#webhook-secret input').inputValue();
    expect(secret).to.match(/^whsec_/);
    expect(await page.locator('#alert-webhooks').innerText()).to.include(url);

    loop = startAlertDelivery(cp.deps, createSecretSealer(cp.deps.config), guardedWebhookSend(targetPolicy(cp.deps.config), 2_000));
    const report = (id: string, micros: number) => ({
      request_id: `${id}-${store.name}-${Date.now()}`,
      key_id: key.id,
      model: 'tg/sonnet',
      input_tokens: 1,
      output_tokens: 1,
      cost_micros: micros,
    });
    await recordUsage(cp.deps, [report('a', 600_000)]);
    await recordUsage(cp.deps, [report('b', 700_000)]);
    const end = Date.now() + 10_000;
    while (received.length < 4 && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    expect(received).to.have.length(4);

    await page.reload();
    await page.locator('#alert-events tbody tr').first().waitFor();
    const rows = await page.locator('#alert-events tbody tr').allInnerTexts();
    expect(rows).to.have.length(4);
    expect(rows.join('\n')).to.include('reached 50 %').and.include('reached 80 %').and.include('reached 100 %').and.include('fell below $9.00');
    expect(
      rows.every((r) => /delivered/i.test(r)),
      rows.join('\n'),
    ).to.equal(true);
    expect(rows.join('\n')).to.include('1 attempt · answered 200');
    expect(await page.evaluate(() => document.body.innerText)).to.not.include(secret);
    // At 1280 px the table fits its card: nothing clipped, no sideways scrolling inside it.
    const clipped = await page.locator('#alert-events .table-wrap').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(clipped).to.be.at.most(0);
    // Two amounts that differ never read the same: cents unless cents would hide the difference.
    const pair = await page.evaluate(async () => {
      const url: string = '/js/dom.js';
      const dom = (await import(url)) as { moneyPair: (a: number, b: number) => HTMLElement[] };
      return [dom.moneyPair(19.994, 19.99), dom.moneyPair(8.7, 9)].map((p) => p.map((e) => e.textContent).join(' < '));
    });
    expect(pair).to.deep.equal(['$19.994 < $19.99', '$8.70 < $9.00']);
    await screenshot(page, `${store.name}-alerts-desktop`);
    expect(admin.problems.splice(0)).to.deep.equal([]);
  });
});
