import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describeEachStore } from '../../support/stores.js';
import { seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';

const DOC = fileURLToPath(new URL('../../../docs/console-api.md', import.meta.url));

/** The shell blocks of the doc's walk-through, in order, as a reader would paste them. */
function walkthroughScript(baseUrl: string): string {
  const doc = readFileSync(DOC, 'utf8');
  const section = doc.split('## Five minutes with curl')[1]!.split('\n## ')[0]!;
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return ['set -eu', ...blocks].join('\n').replaceAll('http://localhost:8080', baseUrl);
}

describeEachStore('docs/console-api.md: the curl walk-through works as written', (store) => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane(store.db);
  });
  after(() => cp.close());

  it('credits, a team with the caller in it, one allowed model and a usable key, all through curl', async function () {
    this.timeout(60_000);
    const org = await seedOrg(cp.deps);
    const script = `${walkthroughScript(cp.url)}\nprintf '\\nTEAM=%s\\nKEY=%s\\n' "$TEAM" "$KEY"\n`;
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      env: { PATH: process.env.PATH, TOKEN: org.console_token, WS: org.workspace_id, ME: org.owner_user_id },
    });
    const team = /^TEAM=(\S+)$/m.exec(stdout)?.[1];
    const key = /^KEY=(\S+)$/m.exec(stdout)?.[1];
    expect(stdout).to.include('{"balance_usd":20}');
    expect(stdout).to.match(/^204$/m);
    expect(key).to.match(/^tgk_/);
    // The key is captured into the shell, never printed by the walk-through itself.
    expect(stdout.split(`KEY=${key}`)[0]).not.to.include(key!);

    const token = org.console_token;
    expect(await ok(`${cp.url}/v1/workspaces/${org.workspace_id}`, { token })).to.include({ balance_usd: 20 });
    expect(await ok(`${cp.url}/v1/teams/${team}/members`, { token })).to.deep.equal([
      { user_id: org.owner_user_id, user_name: `owner@${org.org_slug}.test` },
    ]);
    expect(await ok(`${cp.url}/v1/teams/${team}/models`, { token })).to.deep.equal({ models: ['tg/sonnet'] });
    const [listed] = await ok(`${cp.url}/v1/teams/${team}/keys`, { token });
    expect(listed).to.include({ kind: 'personal', owner_user_id: org.owner_user_id, last4: key!.slice(-4), revoked_at: null });
  });
});
