import { expect } from 'chai';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PROVIDER_KEY = 'sk-provider-readme-test';

/** The README's walk-through, exactly as a reader pastes it, pointed at this test's ports. */
function walkthroughScript(controlPlanePort: number, proxyPort: number): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('<!-- walkthrough:start -->')[1]!.split('<!-- walkthrough:end -->')[0]!;
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks.length).to.be.greaterThan(5);
  return ['set -eu', ...blocks]
    .join('\n')
    .replaceAll('http://localhost:8080', `http://localhost:${controlPlanePort}`)
    .replaceAll('http://localhost:8081', `http://localhost:${proxyPort}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became healthy`);
}

describe('README: the five-minute walk-through works as written against npm start', function () {
  this.timeout(120_000);
  let fake: FakeUpstream;
  let service: ChildProcess;
  let workDir: string;
  let cpPort: number;
  let proxyPort: number;
  let serviceOutput = '';

  before(async () => {
    fake = await startFakeUpstream();
    // Inside the repository (under the git-ignored data/), so `npm run` finds package.json.
    workDir = join(ROOT, 'data', `readme-test-${process.pid}-${randomBytes(3).toString('hex')}`);
    mkdirSync(workDir, { recursive: true });
    const modelsFile = join(workDir, 'models.json');
    const example = JSON.parse(readFileSync(join(ROOT, 'models.example.json'), 'utf8')) as {
      providers: Record<string, { chat_completions_base_url: string; messages_base_url: string }>;
    };
    example.providers.primary!.chat_completions_base_url = fake.chatCompletionsBaseUrl;
    example.providers.primary!.messages_base_url = fake.messagesBaseUrl;
    writeFileSync(modelsFile, JSON.stringify(example));
    cpPort = await freePort();
    proxyPort = await freePort();
    // npm start's own environment: the embedded store, whatever CI exports.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CONTROL_PLANE_PORT: String(cpPort),
      PROXY_PORT: String(proxyPort),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://localhost:${cpPort}`,
      EDGE_BASE_URL: `http://localhost:${proxyPort}`,
      DATA_DIR: join(workDir, 'data'),
      MODELS_FILE: modelsFile,
      PRIMARY_API_KEY: PROVIDER_KEY,
      LOG_LEVEL: 'warn',
    };
    service = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    service.stdout!.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    service.stderr!.on('data', (d: Buffer) => (serviceOutput += d.toString()));
    await waitHealthy(`http://127.0.0.1:${cpPort}`, service);
    await waitHealthy(`http://127.0.0.1:${proxyPort}`, service);
  });

  after(async () => {
    if (service?.pid && service.exitCode === null) {
      const exited = new Promise((r) => service.once('exit', r));
      process.kill(-service.pid, 'SIGTERM');
      await exited;
    }
    await fake?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('bootstrap, credits, team, model access, key, and a call on each wire format, command by command', async () => {
    const script = `${walkthroughScript(cpPort, proxyPort)}\nprintf '\\nTOKEN=%s\\nTEAM=%s\\nKEY=%s\\n' "$TOKEN" "$TEAM" "$KEY"\n`;
    let stdout: string;
    try {
      ({ stdout } = await promisify(execFile)('bash', ['-c', script], {
        cwd: workDir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(workDir, 'data') },
      }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`walk-through failed:\n${e.stdout}\n${e.stderr}\nservice:\n${serviceOutput}`, { cause: err });
    }
    const token = /^TOKEN=(\S+)$/m.exec(stdout)?.[1];
    const team = /^TEAM=(\S+)$/m.exec(stdout)?.[1];
    const key = /^KEY=(\S+)$/m.exec(stdout)?.[1];
    expect(token).to.match(/^tgs_/);
    expect(key).to.match(/^tgk_/);
    expect(stdout).to.include('{"balance_usd":20}');
    expect(stdout).to.match(/^204$/m);
    expect(stdout).to.include('{"models":["tg/sonnet"]}');
    // The walk-through captures the secret without printing it.
    expect(stdout.split(`KEY=${key}`)[0]).not.to.include(key!);

    // Step 6 answered on both formats through the proxy, with the provider's key upstream.
    expect(stdout).to.include('"object":"chat.completion"');
    expect(stdout).to.include('"type":"message"');
    expect(fake.requests.map((r) => r.path)).to.deep.equal(['/v1/chat/completions', '/anthropic/v1/messages']);
    for (const r of fake.requests) {
      expect(r.credential?.key).to.equal(PROVIDER_KEY);
      expect(JSON.stringify(r.headers)).not.to.include(key!);
      expect((r.body as { model: string }).model).to.equal('claude-sonnet-4-5');
    }

    // Both calls are billed to the key (settlement is asynchronous: wait for it).
    let spend = 0;
    for (let i = 0; i < 50 && spend === 0; i++) {
      const res = await fetch(`http://127.0.0.1:${cpPort}/v1/teams/${team}/keys`, { headers: { authorization: `Bearer ${token}` } });
      const [listed] = (await res.json()) as { spend_usd: number }[];
      spend = listed!.spend_usd;
      if (spend === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(spend).to.be.greaterThan(0);
  });
});
