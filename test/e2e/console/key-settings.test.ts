import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, seedOrg, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { launchOrSkip, openConsole, screenshot, signInTo, type ConsolePage } from '../../support/browser.js';

describeEachStore('web console: Settings → Keys lets admins allow members to edit their own keys', (store) => {
  let browser: Browser;
  let cp: TestControlPlane;
  const opened: ConsolePage[] = [];

  before(async function () {
    this.timeout(60_000);
    browser = await launchOrSkip(this, `web console: key settings [${store.name}]`);
    cp = await startTestControlPlane(store.db);
  });

  after(async () => {
    for (const c of opened) await c.context.close();
    await browser?.close();
    await cp?.close();
  });

  it("an admin turns it on, the member renames their own key; turned off, the member's Edit is refused with why; members see no control", async function () {
    this.timeout(90_000);
    const org = await seedOrg(cp.deps);
    const team = (await ok(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'T' } }, 201)).id;
    const member = await addMember(cp.deps, org.org_id);
    const admin = await addMember(cp.deps, org.org_id, { role: 'admin' });
    await ok(`${cp.url}/v1/teams/${team}/members`, { token: org.console_token, body: { user_id: member.user_id } }, 204);
    await ok(`${cp.url}/v1/teams/${team}/keys`, { token: member.token, body: { kind: 'personal', name: 'mine' } }, 201);

    const a = await openConsole(browser, cp.url);
    const m = await openConsole(browser, cp.url);
    opened.push(a, m);
    await signInTo(a.page, admin.token, 'Keys', 'Key settings');
    const box = a.page.getByLabel('Members may change their own personal keys');
    expect(await box.isChecked(), 'off by default').to.equal(false);
    await box.check();
    await a.page.getByText('Members may now change their own keys.').waitFor();
    await screenshot(a.page, `${store.name}-key-settings`);

    await signInTo(m.page, member.token, 'API keys', 'API keys');
    expect(await m.page.getByRole('navigation').getByRole('link', { name: 'Keys', exact: true }).count(), 'no control for members').to.equal(0);
    await m.page.getByRole('button', { name: 'Edit key mine' }).click();
    const dialog = m.page.locator('dialog');
    await dialog.getByLabel('Name').fill('mine, renamed');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await m.page.locator('tr', { hasText: 'mine, renamed' }).waitFor();

    await a.page.reload();
    await a.page.getByRole('heading', { level: 1, name: 'Key settings' }).waitFor();
    await box.uncheck();
    await a.page.getByText('Only owners and admins may change keys now.').waitFor();
    const audited = await store.db.query<{ on: boolean }>(
      `SELECT (detail->>'members_edit_own_keys')::boolean AS on FROM audit_log WHERE org_id = $1 AND action = 'org.key_settings' ORDER BY created_at`,
      [org.org_id],
    );
    expect(audited.map((r) => r.on)).to.deep.equal([true, false]);

    await m.page.getByRole('button', { name: 'Edit key mine, renamed' }).click();
    await dialog.getByLabel('Name').fill('taken back');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'only owners and admins change keys' }).waitFor();
    expect(await dialog.innerText()).to.include('Settings → Keys');
    expect(a.problems).to.deep.equal([]);
    expect(m.problems).to.deep.equal([]);
  });
});
