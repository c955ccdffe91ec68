import { expect } from 'chai';
import { call, seedOrg, type TestControlPlane } from './control-plane.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const CLAUDE_CODE_UA = 'claude-cli/2.1.332 (external, cli)';

export interface SigninTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  email?: string;
}

/** The sign-in endpoints as Claude Code calls them: form bodies, its User-Agent. */
export function signinClient(cp: TestControlPlane) {
  const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    call(`${cp.url}${path}`, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': CLAUDE_CODE_UA, ...headers },
    });
  return {
    form,
    start: () => form('/oauth/device_authorization', { surface: 'claude_code' }),
    poll: (device_code: string) => form('/oauth/token', { grant_type: DEVICE_GRANT, device_code }),
    refresh: (refresh_token: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token }),
    /** The code page's form, posted by a browser signed in to the console. */
    decide: (consoleToken: string, user_code: string, decision: 'approve' | 'deny', origin = cp.url) =>
      form('/oauth/device', { user_code, decision }, { cookie: `tollgate_session=${consoleToken}`, origin }),
  };
}

/** An org whose sign-in gives developers a new team of its default workspace, with a per-device budget. */
export async function seedSigninOrg(cp: TestControlPlane, budgetUsd = 25) {
  const org = await seedOrg(cp.deps);
  const team = await call(`${cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token: org.console_token, body: { name: 'Developers' } });
  expect(team.status, JSON.stringify(team.body)).to.equal(201);
  const saved = await call(`${cp.url}/v1/orgs/${org.org_id}/claude-code-signin`, {
    method: 'PUT',
    token: org.console_token,
    body: { team_id: team.body.id, budget_usd: budgetUsd },
  });
  expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
  return { org, teamId: team.body.id as string };
}

/** The whole device flow to its tokens: start, confirm in the browser, poll once the interval has passed. */
export async function signIn(cp: TestControlPlane, consoleToken: string, passInterval: () => void | Promise<void>): Promise<SigninTokens> {
  const client = signinClient(cp);
  const started = await client.start();
  expect(started.status).to.equal(200);
  expect((await client.decide(consoleToken, started.body.user_code, 'approve')).status).to.equal(200);
  await passInterval();
  const tokens = await client.poll(started.body.device_code);
  expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
  return tokens.body as SigninTokens;
}
