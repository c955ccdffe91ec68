import { expect } from 'chai';
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/**
 * The environment a reader's shell has: nothing Tollgate-specific, no
 * provider key. Each process gets only this, plus (for the servers) the
 * ports this test picked.
 */
const USER_ENV: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };

interface Ports {
  controlPlane: number;
  proxy: number;
  provider: number;
}

/**
 * The only change the test makes to what the reader runs: ports. On a shared
 * machine or a CI runner 8080, 8081 and 9000 may be taken, so every mention of
 * them in the README's commands and in the copy's models.example.json becomes
 * a free port.
 */
function withPorts(text: string, ports: Ports): string {
  return text
    .replaceAll('localhost:8080', `localhost:${ports.controlPlane}`)
    .replaceAll('localhost:8081', `localhost:${ports.proxy}`)
    .replaceAll('127.0.0.1:9000', `127.0.0.1:${ports.provider}`);
}

function shBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The commands between the walk-through markers, exactly as a reader pastes them. */
function walkthroughScript(ports: Ports): string {
  const section = README.split('<!-- walkthrough:start -->')[1]!.split('<!-- walkthrough:end -->')[0]!;
  const blocks = shBlocks(section);
  expect(blocks.length).to.be.greaterThan(5);
  return withPorts(['set -eu', ...blocks].join('\n'), ports);
}

/** The commands the README says to run in terminals 1 and 2 before the walk-through. */
function terminalCommands(): string[] {
  const before = README.split('<!-- walkthrough:start -->')[0]!;
  const commands: string[] = [];
  for (const block of shBlocks(before)) {
    for (const line of block.split('\n')) {
      const m = /^(.+?)\s+# terminal (\d)\b/.exec(line);
      if (m) commands[Number(m[2]) - 1] = m[1]!.trim();
    }
  }
  return commands;
}

/** A fresh checkout: the repository's tracked files as they are now, with this checkout's node_modules linked in. */
function freshCopy(ports: Ports): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-readme-'));
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  expect(files).to.include('README.md');
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const models = join(dir, 'models.example.json');
  writeFileSync(models, withPorts(readFileSync(models, 'utf8'), ports));
  return dir;
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

async function waitFor(ready: () => Promise<boolean>, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    try {
      if (await ready()) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} never became ready`);
}

function startTerminal(command: string, cwd: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

async function stopTerminal(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}

describe('README: the five-minute walk-through works verbatim on a fresh checkout', function () {
  this.timeout(180_000);
  let ports: Ports;
  let dir: string;
  let service: ReturnType<typeof startTerminal> | undefined;
  let provider: ReturnType<typeof startTerminal> | undefined;

  before(async () => {
    ports = { controlPlane: await freePort(), proxy: await freePort(), provider: await freePort() };
    dir = freshCopy(ports);
    const [startCommand, providerCommand] = terminalCommands();
    // The README's two terminals, as written.
    expect(startCommand).to.equal('npm start');
    expect(providerCommand).to.equal('npm run fake-upstream');
    service = startTerminal(startCommand!, dir, {
      ...USER_ENV,
      CONTROL_PLANE_PORT: String(ports.controlPlane),
      PROXY_PORT: String(ports.proxy),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://localhost:${ports.controlPlane}`,
      EDGE_BASE_URL: `http://localhost:${ports.proxy}`,
    });
    // The package script pins --port 9000; a later --port wins.
    provider = startTerminal(`${providerCommand} -- --port ${ports.provider}`, dir, USER_ENV);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.controlPlane}/healthz`)).ok, service.child, 'npm start');
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.proxy}/healthz`)).ok, service.child, 'npm start');
    await waitFor(async () => /listening on/.test(provider!.output()), provider.child, 'npm run fake-upstream');
  });

  after(async () => {
    await stopTerminal(service?.child);
    await stopTerminal(provider?.child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('npm start names the provider key variable that is unset, once, and says a relayed 401 is the provider’s', () => {
    const warnings = service!
      .output()
      .split('\n')
      .filter((l) => l.includes('PRIMARY_API_KEY'));
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/^warning: PRIMARY_API_KEY is not set/);
    expect(warnings[0]).to.include('401');
  });

  it('bootstrap, credits, team, model access, key, and a call on each wire format, command by command', async () => {
    const script = `${walkthroughScript(ports)}\nprintf '\\nTOKEN=%s\\nTEAM=%s\\nKEY=%s\\nWS=%s\\n' "$TOKEN" "$TEAM" "$KEY" "$WS"\n`;
    let stdout: string;
    try {
      ({ stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: dir, env: USER_ENV }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`walk-through failed:\n${e.stdout}\n${e.stderr}\nservice:\n${service!.output()}\nprovider:\n${provider!.output()}`, {
        cause: err,
      });
    }
    const token = /^TOKEN=(\S+)$/m.exec(stdout)?.[1];
    const team = /^TEAM=(\S+)$/m.exec(stdout)?.[1];
    const key = /^KEY=(\S+)$/m.exec(stdout)?.[1];
    const ws = /^WS=(\S+)$/m.exec(stdout)?.[1];
    expect(token).to.match(/^tgs_/);
    expect(key).to.match(/^tgk_/);
    expect(stdout).to.include('{"balance_usd":20}');
    expect(stdout).to.match(/^204$/m);
    expect(stdout).to.include('{"models":["tg/sonnet"],"stale_models":[]}');
    // The walk-through captures the secret without printing it.
    expect(stdout.split(`KEY=${key}`)[0]).not.to.include(key!);
    // Bootstrap wrote its answer to the file itself, readable by its owner only.
    expect(JSON.parse(readFileSync(join(dir, 'acme.json'), 'utf8')).console_token).to.equal(token);
    expect(execFileSync('stat', ['-c', '%a', join(dir, 'acme.json')], { encoding: 'utf8' }).trim()).to.equal('600');

    // Step 6 answered on both formats through the proxy.
    expect(stdout).to.include('"object":"chat.completion"');
    expect(stdout).to.include('"type":"message"');

    // Step 7 shows what the calls cost: it waits for settlement before reading the key list.
    const keyList = stdout.split('\n').find((l) => l.startsWith('[{') && l.includes('"last4"'));
    expect(keyList, 'step 7 printed the key list').to.be.a('string');
    expect((JSON.parse(keyList!) as { spend_usd: number }[])[0]!.spend_usd).to.be.greaterThan(0);

    // Step 8 answered a usage summary and a request log (what they hold is checked below, once settled).
    expect(stdout).to.match(/"totals":\{"spend_usd":/);
    expect(stdout).to.match(/\{"requests":\[/);

    // Both calls are billed to the key (settlement is asynchronous: wait for it).
    let spend = 0;
    for (let i = 0; i < 50 && spend === 0; i++) {
      const res = await fetch(`http://127.0.0.1:${ports.controlPlane}/v1/teams/${team}/keys`, { headers: { authorization: `Bearer ${token}` } });
      const [listed] = (await res.json()) as { spend_usd: number }[];
      spend = listed!.spend_usd;
      if (spend === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(spend).to.be.greaterThan(0);
    let requests: { format: string; status: number }[] = [];
    for (let i = 0; i < 50 && requests.length < 2; i++) {
      const log = await fetch(`http://127.0.0.1:${ports.controlPlane}/v1/workspaces/${ws}/usage/requests`, {
        headers: { authorization: `Bearer ${token}` },
      });
      ({ requests } = (await log.json()) as { requests: typeof requests });
      if (requests.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(requests.map((r) => `${r.format} ${r.status}`).sort()).to.deep.equal(['chat 200', 'messages 200']);
  });
});
