import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../../shared/logger.js';
import { startControlPlane, type RunningControlPlane } from '../../../control-plane/runtime.js';
import { openDatabase } from '../../../control-plane/db/database.js';
import { user_find_by_id } from '../../../control-plane/stores/users.js';
import { TEST_MODELS_FILE, call, testConfig } from '../../support/control-plane.js';
import { resetStore, testPostgresUrl, openTestStore } from '../../support/stores.js';
import { skipped } from '../../support/skips.js';
import { buildService } from '../../support/cluster.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A port for CONTROL_PLANE_PORT that nothing else can take while the suite
 * runs: a port merely found free could be handed to another test's service a
 * moment later, and the CLI would then (rightly) talk to that one. The holder
 * answers 404, as anything that is not Tollgate would.
 */
async function reservedPort(): Promise<{ port: string; release(): Promise<void> }> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: String((server.address() as AddressInfo).port),
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Runs the CLI as a user would (`npm run cli` runs the compiled dist/bin/cli.js:
 * no tsx start for each of the file's ~50 runs; each suite brings dist/ up to
 * date first), with only the settings given. CONTROL_PLANE_PORT
 * always names a port of this test's choosing, so a service someone else runs
 * on 8080 is never asked.
 */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'dist/bin/cli.js'), ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, MODELS_FILE: TEST_MODELS_FILE, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
}

async function startService(env: NodeJS.ProcessEnv): Promise<RunningControlPlane> {
  return startControlPlane(testConfig(env), createLogger('silent', 'cli-test'), { port: 0, host: '127.0.0.1' });
}

function portOf(service: RunningControlPlane): string {
  return new URL(service.url).port;
}

describe('cli: help and usage errors', function () {
  this.timeout(60_000);
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let port: Awaited<ReturnType<typeof reservedPort>>;
  before(async () => {
    await buildService();
    dir = tempDir();
    port = await reservedPort();
    env = { DATA_DIR: join(dir, 'data'), CONTROL_PLANE_PORT: port.port };
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await port.release();
  });

  for (const args of [['--help'], ['-h'], ['help']]) {
    it(`\`cli ${args.join(' ')}\` lists every command and exits 0`, async () => {
      const r = await cli(args, env);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.include('usage: npm run -s cli -- <command> [options]');
      expect(r.stdout).to.match(/^ {2}bootstrap /m);
      expect(r.stdout).to.match(/^ {2}console-token /m);
    });
  }

  for (const args of [
    ['help', 'bootstrap'],
    ['bootstrap', '--help'],
    ['bootstrap', '-h', '--org', 'x'],
  ]) {
    it(`\`cli ${args.join(' ')}\` shows bootstrap's options and exits 0`, async () => {
      const r = await cli(args, env);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.include('usage: npm run -s cli -- bootstrap --org <slug> --name "<name>" --owner <email>');
      for (const flag of ['--owner-name', '--out', '--help']) expect(r.stdout).to.include(flag);
    });
  }

  it('`cli console-token --help` shows its options and exits 0', async () => {
    const r = await cli(['console-token', '--help'], env);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include('usage: npm run -s cli -- console-token --org <slug> --owner <email> [--out <file>]');
  });

  const usageErrors: [string[], RegExp][] = [
    [[], /no command given/],
    [['launch'], /unknown command "launch"; the commands are bootstrap, console-token/],
    [['help', 'launch'], /unknown command "launch"/],
    [['bootstrap', '--org', 'acme'], /bootstrap: missing --name, --owner\./],
    [['console-token'], /console-token: missing --org, --owner\./],
    [['bootstrap', '--org', 'acme', '--name', 'A', '--owner', 'o@a.test', '--colour', 'red'], /bootstrap: Unknown option '--colour'/],
    [['bootstrap', '--org', 'acme', '--name', 'Acme', 'Inc', '--owner', 'o@a.test'], /unexpected argument "Inc"/],
    [['bootstrap', '--org', 'Acme Inc', '--name', 'A', '--owner', 'o@a.test'], /--org must be 1-63 lowercase letters/],
    [['bootstrap', '--org', 'acme', '--name', 'A', '--owner', 'not-an-email'], /--owner must be an email address/],
    [['bootstrap', '--org', 'acme', '--name', 'A', '--owner', 'o@a.test', '--owner-name', ' '], /--owner-name must be/],
    [['bootstrap', '--org'], /bootstrap: Option '--org <value>' argument missing/],
  ];
  for (const [args, message] of usageErrors) {
    it(`\`cli ${args.join(' ') || '(nothing)'}\` is a usage error: exit 2, says what is wrong, writes nothing`, async () => {
      const r = await cli(args, env);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(message);
      expect(r.stdout).to.equal('');
      expect(existsSync(join(dir, 'data'))).to.equal(false);
    });
  }
});

/** The same story on either store: `settings` are the CLI's (and the service's) store settings. */
function storeStory(title: string, settings: () => Promise<NodeJS.ProcessEnv | undefined>): void {
  describe(title, function () {
    this.timeout(120_000);
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let port: Awaited<ReturnType<typeof reservedPort>> | undefined;

    before(async function () {
      await buildService();
      const store = await settings();
      if (!store) {
        skipped(title, 'no PostgreSQL server');
        this.skip();
      }
      dir = tempDir();
      port = await reservedPort();
      env = { DATA_DIR: join(dir, 'data'), CONTROL_PLANE_PORT: port.port, ...store };
    });
    after(async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      await port?.release();
    });

    it('bootstrap --out writes the answer itself (mode 0600) and stores the owner’s given and family name', async () => {
      const out = join(dir, 'acme.json');
      const r = await cli(
        ['bootstrap', '--org', 'acme', '--name', 'Acme Inc', '--owner', 'ada@acme.test', '--owner-name', 'Ada King Lovelace', '--out', out],
        env,
      );
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('');
      expect(statSync(out).mode & 0o777).to.equal(0o600);
      const answer = JSON.parse(readFileSync(out, 'utf8'));
      expect(answer).to.include({ org_slug: 'acme', workspace_slug: 'acme' });
      expect(answer.console_token).to.match(/^tgs_/);
      const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR! });
      try {
        const owner = await user_find_by_id(db, answer.org_id, answer.owner_user_id);
        expect(owner).to.include({ user_name: 'ada@acme.test', given_name: 'Ada King', family_name: 'Lovelace', display_name: 'Ada King Lovelace' });
      } finally {
        await db.close();
      }
    });

    it('bootstrap refuses an --out file that exists, before creating anything, and leaves the file as it was', async () => {
      const out = join(dir, 'taken.json');
      writeFileSync(out, 'precious');
      const r = await cli(['bootstrap', '--org', 'other', '--name', 'Other', '--owner', 'o@other.test', '--out', out], env);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`${out} already exists; it is never overwritten`);
      expect(readFileSync(out, 'utf8')).to.equal('precious');
      // The slug is still free: nothing was created.
      const again = await cli(['bootstrap', '--org', 'other', '--name', 'Other', '--owner', 'o@other.test'], env);
      expect(again.code, again.stderr).to.equal(0);
      expect(JSON.parse(again.stdout).org_slug).to.equal('other');
    });

    it('bootstrap on an existing slug exits 1, changes nothing, leaves no --out file, and names console-token', async () => {
      const out = join(dir, 'again.json');
      const r = await cli(['bootstrap', '--org', 'acme', '--name', 'Acme again', '--owner', 'eve@acme.test', '--out', out], env);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include('An organization with slug "acme" already exists; nothing was changed.');
      expect(r.stderr).to.include('npm run -s cli -- console-token --org acme --owner <owner email>');
      expect(existsSync(out)).to.equal(false);
    });

    it('console-token issues a new token for the owner; a service on the same store accepts it', async () => {
      const r = await cli(['console-token', '--org', 'acme', '--owner', 'ADA@acme.test'], env);
      expect(r.code, r.stderr).to.equal(0);
      const answer = JSON.parse(r.stdout);
      expect(answer.console_token).to.match(/^tgs_/);
      expect(new Date(answer.expires_at).getTime()).to.be.greaterThan(Date.now());
      const service = await startService({ DATA_DIR: env.DATA_DIR, DATABASE_URL: env.DATABASE_URL });
      try {
        const me = await call(`${service.url}/v1/me`, { token: answer.console_token });
        expect(me.status).to.equal(200);
        expect(me.body.user_name ?? me.body.email).to.equal('ada@acme.test');
        const audit = await call(`${service.url}/v1/orgs/${answer.org_id}/audit`, { token: answer.console_token });
        expect(audit.body.map((a: { action: string }) => a.action)).to.include('session.issue');
      } finally {
        await service.close();
      }
    });

    it('key-update and key-rotate change a key as the owner, audited as them; a bad period is refused (exit 1) and changes nothing', async () => {
      const token = JSON.parse((await cli(['console-token', '--org', 'acme', '--owner', 'ada@acme.test'], env)).stdout);
      const service = await startService({ DATA_DIR: env.DATA_DIR, DATABASE_URL: env.DATABASE_URL });
      let keyId: string;
      try {
        const me = await call(`${service.url}/v1/me`, { token: token.console_token });
        const workspaceId = (await call(`${service.url}/v1/orgs/${token.org_id}/workspaces`, { token: token.console_token })).body[0].id;
        const team = await call(`${service.url}/v1/workspaces/${workspaceId}/teams`, { token: token.console_token, body: { name: 'Core' } });
        const key = await call(`${service.url}/v1/teams/${team.body.id}/keys`, { token: token.console_token, body: { kind: 'team', name: 'ci' } });
        keyId = key.body.id;
        expect(me.status).to.equal(200);
      } finally {
        await service.close();
      }
      const actor = ['--org', 'acme', '--owner', 'ada@acme.test', '--key', keyId];
      const bad = await cli(['key-update', ...actor, '--budget-period', 'year'], env);
      expect(bad.code).to.equal(1);
      expect(bad.stderr).to.include('budget_period');
      const changed = await cli(['key-update', ...actor, '--budget-usd', '20', '--budget-period', 'month', '--rpm', '60'], env);
      expect(changed.code, changed.stderr).to.equal(0);
      expect(JSON.parse(changed.stdout)).to.include({ id: keyId, budget_usd: 20, budget_period: 'month', rpm: 60, period_spend_usd: 0 });
      const cleared = await cli(['key-update', ...actor, '--rpm', 'none'], env);
      expect(JSON.parse(cleared.stdout).rpm).to.equal(null);
      const rotated = await cli(['key-rotate', ...actor, '--grace-seconds', '3600'], env);
      expect(rotated.code, rotated.stderr).to.equal(0);
      const answer = JSON.parse(rotated.stdout);
      expect(answer).to.have.keys('id', 'key', 'prefix', 'previous_expires_at');
      expect(Date.parse(answer.previous_expires_at) - Date.now()).to.be.within(3_500_000, 3_600_000);
      const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR! });
      try {
        const rows = await db.query<{ action: string; actor: string }>(`SELECT action, actor FROM audit_log WHERE target_id = $1 ORDER BY id`, [
          keyId,
        ]);
        expect(rows.map((r) => r.action)).to.deep.equal(['key.create', 'key.update', 'key.update', 'key.rotate']);
        expect(rows.every((r) => r.actor === `user:${token.user_id}`)).to.equal(true);
      } finally {
        await db.close();
      }
    });

    it('console-token refuses an unknown org, an unknown user, and a plain member (exit 1)', async () => {
      const unknownOrg = await cli(['console-token', '--org', 'nobody', '--owner', 'ada@acme.test'], env);
      expect(unknownOrg.code).to.equal(1);
      expect(unknownOrg.stderr).to.include('Organization "nobody" not found.');
      const unknownUser = await cli(['console-token', '--org', 'acme', '--owner', 'eve@acme.test'], env);
      expect(unknownUser.code).to.equal(1);
      expect(unknownUser.stderr).to.include('Organization "acme" has no member "eve@acme.test".');
      const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR! });
      try {
        // Demote the owner: a member may not mint console tokens from the CLI.
        await db.query(`UPDATE memberships SET role = 'member' FROM users u WHERE u.id = memberships.user_id AND u.user_name = 'o@other.test'`);
      } finally {
        await db.close();
      }
      const member = await cli(['console-token', '--org', 'other', '--owner', 'o@other.test'], env);
      expect(member.code).to.equal(1);
      expect(member.stderr).to.include('is a member of "other", not an owner or admin');
    });
  });
}

storeStory('cli on the embedded store (DATA_DIR)', async () => ({}));
storeStory('cli on PostgreSQL (DATABASE_URL)', async () => {
  const url = await testPostgresUrl();
  if (!url) return undefined;
  await resetStore((await openTestStore('postgres'))!);
  return { DATABASE_URL: url };
});

describe('cli: the store the running service uses', function () {
  this.timeout(120_000);
  let dir: string;
  let service: RunningControlPlane | undefined;
  before(() => buildService());
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('with npm start holding the embedded store, bootstrap and console-token go through the service, whose tokens then work', async () => {
    service = await startService({ DATA_DIR: join(dir, 'data') });
    const env = { DATA_DIR: join(dir, 'data'), CONTROL_PLANE_PORT: portOf(service) };
    const boot = await cli(['bootstrap', '--org', 'live', '--name', 'Live', '--owner', 'o@live.test', '--out', join(dir, 'live.json')], env);
    expect(boot.code, boot.stderr).to.equal(0);
    const { console_token } = JSON.parse(readFileSync(join(dir, 'live.json'), 'utf8'));
    expect((await call(`${service.url}/v1/me`, { token: console_token })).status).to.equal(200);
    const again = await cli(['console-token', '--org', 'live', '--owner', 'o@live.test'], env);
    expect(again.code, again.stderr).to.equal(0);
    expect((await call(`${service.url}/v1/me`, { token: JSON.parse(again.stdout).console_token })).status).to.equal(200);
    // Key commands go through the service too: it holds the store.
    const ws = (await call(`${service.url}/v1/orgs/${JSON.parse(again.stdout).org_id}/workspaces`, { token: console_token })).body[0].id;
    const team = (await call(`${service.url}/v1/workspaces/${ws}/teams`, { token: console_token, body: { name: 'Core' } })).body.id;
    const key = (await call(`${service.url}/v1/teams/${team}/keys`, { token: console_token, body: { kind: 'team', name: 'ci' } })).body;
    const actor = ['--org', 'live', '--owner', 'o@live.test', '--key', key.id];
    const changed = await cli(['key-update', ...actor, '--budget-usd', '5', '--budget-period', 'day'], env);
    expect(changed.code, changed.stderr).to.equal(0);
    expect(JSON.parse(changed.stdout)).to.include({ budget_usd: 5, budget_period: 'day' });
    const rotated = await cli(['key-rotate', ...actor, '--grace-seconds', '0'], env);
    expect(rotated.code, rotated.stderr).to.equal(0);
    const listed = (await call(`${service.url}/v1/teams/${team}/keys`, { token: console_token })).body[0];
    expect(listed).to.include({ prefix: JSON.parse(rotated.stdout).prefix, budget_period: 'day' });
  });

  it('refuses (exit 1, nothing written) when the service on CONTROL_PLANE_PORT uses PostgreSQL and the CLI has no DATABASE_URL', async function () {
    const url = await testPostgresUrl();
    if (!url) {
      skipped('cli wrong-store refusal against PostgreSQL', 'no PostgreSQL server');
      this.skip();
    }
    service = await startService({ DATABASE_URL: url, DATA_DIR: join(dir, 'service-data') });
    const cliData = join(dir, 'data');
    const r = await cli(['bootstrap', '--org', 'elsewhere', '--name', 'E', '--owner', 'o@e.test', '--out', join(dir, 'e.json')], {
      DATA_DIR: cliData,
      CONTROL_PLANE_PORT: portOf(service),
    });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(
      `uses a PostgreSQL database (DATABASE_URL), but these settings point at the embedded store in ${cliData}; nothing was written.`,
    );
    expect(existsSync(cliData)).to.equal(false);
    expect(existsSync(join(dir, 'e.json'))).to.equal(false);
    // …and with the service's settings it works.
    const ok = await cli(['bootstrap', '--org', 'elsewhere', '--name', 'E', '--owner', 'o@e.test'], {
      DATABASE_URL: url,
      CONTROL_PLANE_PORT: portOf(service),
    });
    expect(ok.code, ok.stderr).to.equal(0);
    expect((await call(`${service.url}/v1/me`, { token: JSON.parse(ok.stdout).console_token })).status).to.equal(200);
  });

  it('refuses when the service on CONTROL_PLANE_PORT holds an embedded store in another DATA_DIR', async () => {
    service = await startService({ DATA_DIR: join(dir, 'service-data') });
    const r = await cli(['console-token', '--org', 'acme', '--owner', 'o@acme.test'], {
      DATA_DIR: join(dir, 'data'),
      CONTROL_PLANE_PORT: portOf(service),
    });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include('uses an embedded store in another DATA_DIR');
    expect(existsSync(join(dir, 'data'))).to.equal(false);
  });
});
