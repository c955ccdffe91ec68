import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startTestControlPlane, TEST_MODELS_FILE, type TestControlPlane } from '../../support/control-plane.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/index.js';
import { moneyOf, seedKey, UPSTREAM_SECRET } from '../../support/data-plane.js';
import { edgePath, modelBody } from '../../support/edge-calls.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

interface ProxyProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Everything it logged, one JSON line each. */
  lines: string[];
  exited: Promise<number | null>;
  waitForLog(msg: string): Promise<void>;
}

/** `bin/proxy.ts` as its own process, as production runs it, aimed at the test's control plane and fake provider. */
async function startProxyProcess(cp: TestControlPlane, fake: FakeUpstream, dir: string): Promise<ProxyProcess> {
  const catalog = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, Record<string, string>> };
  for (const p of Object.values(catalog.providers)) {
    p.chat_completions_base_url = fake.chatCompletionsBaseUrl;
    p.messages_base_url = fake.messagesBaseUrl;
  }
  const modelsFile = join(dir, 'models.json');
  writeFileSync(modelsFile, JSON.stringify(catalog));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/proxy.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_URL: cp.url,
      DATA_PLANE_TOKEN: cp.deps.config.dataPlaneToken,
      MODELS_FILE: modelsFile,
      TEST_PRIMARY_API_KEY: UPSTREAM_SECRET,
      HOST: '127.0.0.1',
      PROXY_PORT: String(port),
      METRICS_PORT: '0',
      SHUTDOWN_GRACE_SECONDS: '20',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { msg: string; resolve: () => void }[] = [];
  let partial = '';
  const onData = (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters) if (line.includes(`"msg":"${w.msg}`)) w.resolve();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || i > 300) throw new Error(`the proxy did not become ready:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    port,
    lines,
    exited,
    waitForLog: (msg) =>
      new Promise<void>((resolve) => {
        if (lines.some((l) => l.includes(`"msg":"${msg}`))) resolve();
        else waiters.push({ msg, resolve });
      }),
  };
}

/** Opens a stream and waits for its first bytes; returns them with the reader for the rest. */
async function openStream(url: string, slug: string, secret: string): Promise<{ reader: ReadableStreamDefaultReader<Uint8Array>; first: string }> {
  const res = await fetch(`${url}${edgePath('chat', slug)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(modelBody('chat', { stream: true })),
  });
  expect(res.status).to.equal(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  return { reader, first: Buffer.from(first.value!).toString() };
}

describeEachStore('lifecycle: the proxy process drains on SIGTERM', (store) => {
  let cp: TestControlPlane;
  let fake: FakeUpstream;
  let dir: string;
  let proxy: ProxyProcess | undefined;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    fake = await startFakeUpstream();
    dir = mkdtempSync(join(tmpdir(), 'tollgate-drain-'));
  });
  afterEach(() => {
    if (proxy?.child.exitCode === null) proxy.child.kill('SIGKILL');
    proxy = undefined;
  });
  after(async () => {
    await fake.close();
    await cp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A proxy process with a paced stream of `outputTokens` events in flight, told to stop once it has begun. */
  async function sigtermMidStream(outputTokens: number) {
    proxy = await startProxyProcess(cp, fake, dir);
    const k = await seedKey(cp.deps);
    fake.enqueue({ kind: 'ok', outputTokens, eventDelayMs: 50 });
    const { reader, first } = await openStream(proxy.url, k.slug, k.secret);
    proxy.child.kill('SIGTERM');
    await proxy.waitForLog('shutting down');
    return { proxy, k, reader, first };
  }

  it('SIGTERM during a slow stream: the stream completes, new connections are refused, usage is settled, exit 0', async function () {
    this.timeout(60_000);
    const { proxy, k, reader, first } = await sigtermMidStream(40);
    expect(await refused(proxy.port)).to.equal(true);

    let text = first;
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
    expect(text).to.include('data: [DONE]');
    expect(text.match(/"content":"/g)?.length).to.be.greaterThanOrEqual(40);

    expect(await proxy.exited).to.equal(0);
    expect(proxy.lines.some((l) => l.includes('"msg":"shut down cleanly"'))).to.equal(true);
    // Settled before the process left: the ledger has the call, billed for its 40 output tokens.
    const m = await moneyOf(cp.deps, k);
    expect(m.entries).to.equal(1);
    expect(m.spend).to.be.greaterThan((40 * 15) / 1_000_000);
    // The access log line of the drained stream went out too, with no secret in it.
    const access = proxy.lines.filter((l) => l.includes('"msg":"edge request"'));
    expect(access).to.have.length(1);
    expect(access[0]).to.include('"status":200').and.include('"outputTokens":40').and.not.include(k.secret);
  });

  it('a second signal exits at once, without waiting for the stream', async function () {
    this.timeout(60_000);
    const { proxy, reader } = await sigtermMidStream(400);
    proxy.child.kill('SIGTERM');
    expect(await proxy.exited).to.equal(1);
    const cut = await (async () => {
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read());
        return false;
      } catch {
        return true;
      }
    })();
    expect(cut, 'the stream was cut, not completed').to.equal(true);
  });
});
