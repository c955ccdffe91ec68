import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { runProcess } from '../../support/capture/clients.js';
import { describeEachStore } from '../../support/stores.js';
import { creditWorkspace, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { launchOrSkip, openConsole, screenshot } from '../../support/browser.js';
import { startTestIdp, type TestIdp } from '../../support/oidc-provider.js';
import { seedSigninOrg } from '../../support/gateway-signin.js';
import { seedScimOrg, userBody, PATCH_OP, type ScimOrg } from '../../support/scim.js';
import { Terminal, tmuxInstalled } from '../../support/terminal.js';
import { skipped } from '../../support/skips.js';
import { configureSso } from '../../integration/sso/helpers.js';
import { team_models_replace } from '../../../control-plane/stores/teams.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import type { RecordedRequest } from '../../support/fake-upstream/types.js';

const ROOT = join(import.meta.dirname, '../../..');
const CLAUDE = join(ROOT, 'node_modules/.bin/claude');
/** The models file's alias whose `client_names` take the Claude names Claude Code sends by itself. */
const ALIAS = 'tg/gpt-direct';
const SECRET_LINE = 'the tollgate sign-in test file says 41c0de';
/** What Claude Code prints about a model name it does not know, or about a 404 it blames on the model. */
const UNKNOWN_MODEL =
  /doesn't recognize the model|does not recognize these model|isn't described by this version's model catalog|issue with the selected model/;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The rollout as an organization does it, with the real Claude Code binary
 * in a terminal: its settings name Tollgate as the gateway, the developer
 * runs /login, signs in in a real browser through the org's SSO (a real
 * OpenID provider) and confirms the code; then `claude -p` works with no key
 * and no model variable, billed to that developer; SCIM deactivation ends it.
 *
 * Claude Code reads `forceLoginMethod`/`forceLoginGatewayUrl` from the
 * machine's managed settings (/etc/claude-code, which a test on a shared
 * machine must not write) or, where there are none, from the user's own
 * ~/.claude/settings.json: the test uses the latter, in a temporary HOME.
 */
describeEachStore('Claude Code /login through Tollgate: the real binary, a real browser, the org SSO', (store) => {
  let dp: DataPlane;
  let idp: TestIdp;
  let browser: Browser;
  let org: BootstrapResult;
  let scim: ScimOrg;
  let tmp: string;
  let home: string;
  let work: string;
  let userId: string;
  const terminals: Terminal[] = [];
  const email = `dev-${process.pid}@example.test`;

  before(async function () {
    this.timeout(60_000);
    if (!(await tmuxInstalled()) && !process.env.CI) {
      skipped('Claude Code /login in a terminal', 'no tmux');
      this.skip();
    }
    browser = await launchOrSkip(this, 'Claude Code /login');
    dp = await startDataPlane(store, { fake: { formats: 'chat', defaultBehavior: { kind: 'ok', tools: 'none' } } });
    idp = await startTestIdp(`${dp.cp.url}/v1/auth/sso/callback`);
    const seeded = await seedSigninOrg(dp.cp, 5);
    org = seeded.org;
    await dp.cp.deps.db.transaction((tx) => team_models_replace(tx, seeded.teamId, [ALIAS]));
    await creditWorkspace(dp.cp.deps, org.workspace_id, 10);
    await configureSso(dp.cp, org, idp);
    // With SCIM on, only provisioned people may sign in: the identity provider provisions the developer first.
    scim = await seedScimOrg(dp.cp, org);
    const sub = `idp-${process.pid}`;
    const created = await scim.scim('POST', '/Users', userBody(email, { externalId: sub }));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    userId = created.body.id as string;
    idp.signInAs({ sub, email, email_verified: true });

    tmp = mkdtempSync(join(tmpdir(), 'tollgate-claude-login-'));
    home = join(tmp, 'home');
    work = join(tmp, 'work');
    mkdirSync(join(home, '.claude'), { recursive: true });
    mkdirSync(work);
    writeFileSync(join(work, 'notes.txt'), `${SECRET_LINE}\n`);
    // A developer who has used Claude Code before and trusts this folder: no first-run screens.
    writeFileSync(
      join(home, '.claude.json'),
      JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', numStartups: 1, projects: { [work]: { hasTrustDialogAccepted: true } } }),
    );
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ forceLoginMethod: 'gateway', forceLoginGatewayUrl: `${dp.proxy.url}/${org.workspace_slug}/anthropic` }),
    );
  });
  after(async () => {
    for (const t of terminals) await t.close();
    await browser?.close();
    await idp?.close();
    await dp?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** Nothing but a home, and no key or model variable: everything else comes from the sign-in. */
  const env = (): Record<string, string> => ({
    HOME: home,
    // Claude Code would open the verification page itself; the test's browser does instead.
    BROWSER: '/bin/true',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
  });
  const openClaude = async () => {
    const t = await Terminal.start([CLAUDE], env(), work);
    terminals.push(t);
    return t;
  };
  const chatCalls = (): RecordedRequest[] => dp.fake.requests.filter((r) => r.path === '/v1/chat/completions');

  it('/login shows a code, the browser signs in through SSO and confirms it; claude -p then runs a tool round trip billed to the developer; SCIM deactivation stops it', async function () {
    this.timeout(300_000);
    expect(Object.keys(env()).filter((k) => k.startsWith('ANTHROPIC_'))).to.deep.equal([]);
    const term = await openClaude();
    await term.waitFor(/❯/, 30_000);
    await term.type('/login');
    // The gateway from the settings, named on the login screen.
    await term.waitFor(new RegExp(`Cloud gateway[\\s\\S]*Gateway:\\s+${dp.proxy.url}/${org.workspace_slug}/anthropic`));
    await term.press('Enter');
    // http on loopback: the trust prompt names no certificate; the developer trusts the gateway once.
    await term.waitFor(/Trust gateway 127\.0\.0\.1\?/, 30_000);
    await term.press('Up', 'Enter');
    // What the developer reads off the terminal: the code and the page to confirm it on.
    const screen = await term.waitFor(/Code:\s+[B-Z]{4}-[B-Z]{4}[\s\S]*http:\/\/\S+\/oauth\/device/, 30_000);
    const userCode = /Code:\s+([B-Z]{4}-[B-Z]{4})/.exec(screen)![1]!;
    const verificationUrl = /(http:\/\/\S+\/oauth\/device)\b/.exec(screen)![1]!;
    expect(verificationUrl).to.equal(`${dp.cp.url}/oauth/device`);

    // The browser step: the org's SSO at a real OpenID provider, then the confirmation.
    const { context, page, problems } = await openConsole(browser, dp.cp.url);
    await page.goto(verificationUrl);
    await page.getByLabel('Organization').fill(org.org_slug);
    await page.getByLabel('Code shown in Claude Code').fill(userCode);
    await page.getByRole('button', { name: 'Continue to sign in' }).click();
    await page.getByRole('button', { name: 'Connect Claude Code' }).waitFor();
    expect(await page.getByLabel('Code shown in Claude Code').inputValue()).to.equal(userCode);
    expect(await page.getByText(`You are signed in as ${email}`).isVisible()).to.equal(true);
    await screenshot(page, 'claude-code-login-confirm');
    await page.getByRole('button', { name: 'Connect Claude Code' }).click();
    await page.getByText('You can close this window').waitFor();
    await context.close();
    expect(problems).to.deep.equal([]);

    // Back in the terminal: Claude Code shows the account the gateway named; the developer confirms it.
    await term.waitFor(new RegExp(`Signed in to Cloud gateway as ${email.replace(/\./g, '\\.')}`), 30_000);
    await term.press('Up', 'Enter');
    await term.waitFor(/Connected to Cloud gateway/, 30_000);
    await term.press('Enter');
    await term.waitFor(/Login successful|❯/, 30_000);
    await term.type('/exit');
    await sleep(2000);

    // claude -p with the stored sign-in only: no key, no model variable; its own model names reach the alias.
    dp.fake.reset();
    dp.fake.enqueue({ kind: 'ok', tools: [{ name: 'Read', input: { file_path: join(work, 'notes.txt') } }] });
    const run = await runProcess(CLAUDE, ['-p', 'What does notes.txt say?'], env(), work, 150_000);
    expect(run.exit, run.stderr || run.stdout).to.equal(0);
    expect(run.stdout).to.match(/tok1 tok2/);
    expect(`${run.stdout}${run.stderr}`).to.not.match(UNKNOWN_MODEL);
    const calls = chatCalls();
    expect(calls.length).to.be.at.least(2);
    const tool = (calls[1]!.body as { messages: { role: string; content?: unknown }[] }).messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool?.content)).to.include(SECRET_LINE);
    // Billed to the developer's own sign-in key (personal, with the org's $5 per-device budget), as the alias.
    await dp.proxy.drain();
    const billed = await dp.cp.deps.db.query<{ spend: number; budget: number; kind: string; model: string }>(
      `SELECT k.spend_usd::float8 AS spend, k.budget_usd::float8 AS budget, k.kind, l.model
         FROM api_keys k JOIN ledger_entries l ON l.key_id = k.id AND l.kind = 'usage'
        WHERE k.owner_user_id = $1 AND k.gateway_session_id IS NOT NULL`,
      [userId],
    );
    expect(billed.length).to.be.at.least(2);
    expect(billed[0]).to.include({ kind: 'personal', budget: 5 });
    expect(billed[0]!.spend).to.be.greaterThan(0);
    expect([...new Set(billed.map((b) => b.model))]).to.deep.equal([ALIAS]);

    // SCIM deactivates the developer; the next prompt in Claude Code fails with a message it shows.
    const again = await openClaude();
    expect(await again.waitFor(/❯/, 30_000)).to.not.match(UNKNOWN_MODEL);
    // The access token Claude Code stored (and sends): live until SCIM deactivates its owner...
    const token = /"(tgk_[A-Za-z0-9_-]+)"/.exec(readFileSync(join(home, '.claude', '.credentials.json'), 'utf8'))![1]!;
    const listModels = () =>
      fetch(`${dp.proxy.url}/${org.workspace_slug}/anthropic/v1/models`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await listModels()).to.equal(200);
    const off = await scim.scim('PATCH', `/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] });
    expect(off.status).to.equal(200);
    const offAt = Date.now();
    // ...then refused at the proxy within the revocation bound...
    let status = 0;
    while (Date.now() - offAt <= 2000 && (status = await listModels()) !== 401) await sleep(50);
    expect(status, 'refused within 2 s').to.equal(401);
    // ...so the next prompt fails, never reaching the provider, and Claude Code shows Tollgate's 401 message.
    dp.fake.reset();
    await again.type('say hi');
    expect(await again.waitFor(/401 Invalid API key\./, 20_000)).to.not.match(UNKNOWN_MODEL);
    expect(chatCalls()).to.deep.equal([]);
  });
});
