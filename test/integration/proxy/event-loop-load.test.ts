import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { openTestStore, resetStore } from '../../support/stores.js';
import { startTestControlPlane, TEST_MODELS_FILE, type TestControlPlane } from '../../support/control-plane.js';
import { seedKey, UPSTREAM_SECRET, type SeededKey } from '../../support/data-plane.js';
import { freePort } from '../../support/processes.js';
import type { WireFormat } from '../../../proxy/call.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The p-th percentile of `xs` (nearest rank). */
function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The proxy's own figures (test/support/loop-delay.ts): its loop's delay, and its main thread's CPU time. */
interface LoopFigures {
  p50: number;
  p99: number;
  max: number;
  cpuMs: number;
}

interface Child {
  process: ChildProcess;
  output: string[];
}

function startChild(args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (d: Buffer) => output.push(...d.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { process: child, output };
}

async function until(what: string, child: Child, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await probe().catch(() => false)) return;
    if (child.process.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up:\n${child.output.slice(-30).join('\n')}`);
}

type Part = { type: string; text: string } | { text: string };
type Turn = { role: string; content: Part[] } | { role: string; parts: Part[] };

/** Three short text parts of turn `i`, in the part shape `make` builds. */
const parts = (i: number, make: (text: string) => Part): Part[] => [0, 1, 2].map((j) => make(`turn ${i} part ${j}: a lazy dog`));

const textTurn = (i: number): Turn => ({ role: i % 2 === 1 ? 'assistant' : 'user', content: parts(i, (text) => ({ type: 'text', text })) });
/**
 * Turn `i` of a conversation in each format's shape. A Record, so a new
 * format does not compile until its turns are written; a Responses input
 * here is the client's own turns, all user ones.
 */
const TURN: Record<WireFormat, (i: number) => Turn> = {
  chat: textTurn,
  messages: textTurn,
  responses: (i) => ({ role: 'user', content: parts(i, (text) => ({ type: 'input_text', text })) }),
  gemini: (i) => ({ role: i % 2 === 1 ? 'model' : 'user', parts: parts(i, (text) => ({ text })) }),
};

/**
 * A conversation of `n` turns of three short text parts each (~150 bytes a
 * turn): small objects are what costs most to parse and translate per byte.
 */
function turns(n: number, format: WireFormat): Turn[] {
  return Array.from({ length: n }, (_, i) => TURN[format](i));
}

// Odd: the conversation ends on a user turn.
const TURNS = 45_001;

/** Asks GET PROBE_URL every 5 ms, one at a time; on SIGTERM prints the latencies (ms) as a JSON line and exits. */
const PROBER = `
const latencies = [];
let running = true;
process.on('SIGTERM', () => { running = false; });
console.log('probing');
(async () => {
  while (running) {
    const t = performance.now();
    await (await fetch(process.env.PROBE_URL)).text();
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 5));
  }
  console.log(JSON.stringify(latencies.map((x) => Math.round(x * 10) / 10)));
})();
`;

/** The multi-MiB calls, each on the path and alias that makes the proxy do that work. */
function heavyCalls(): { what: string; path: string; body: Uint8Array<ArrayBuffer> }[] {
  const messages = turns(TURNS, 'messages');
  const chat = turns(TURNS, 'chat');
  const input = turns(TURNS, 'responses');
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  return [
    { what: 'count_tokens counted locally', path: 'anthropic/v1/messages/count_tokens', body: json({ model: 'tg/gpt-direct', messages }) },
    { what: 'Messages → Chat', path: 'anthropic/v1/messages', body: json({ model: 'tg/gpt-direct', max_tokens: 16, messages }) },
    { what: 'Messages passed through', path: 'anthropic/v1/messages', body: json({ model: 'tg/claude-direct', max_tokens: 16, messages }) },
    { what: 'Chat passed through', path: 'v1/chat/completions', body: json({ model: 'tg/gpt-direct', messages: chat }) },
    { what: 'Chat → Messages', path: 'v1/chat/completions', body: json({ model: 'tg/claude-direct', max_tokens: 16, messages: chat }) },
    { what: 'Responses passed through', path: 'v1/responses', body: json({ model: 'tg/gpt-responses', input }) },
    { what: 'Responses → Chat', path: 'v1/responses', body: json({ model: 'tg/gpt-direct', input }) },
  ];
}

/**
 * No request may hold the proxy's event loop for more than a few
 * milliseconds (issue 31): while multi-MiB calls of every format are in
 * flight — counted locally, translated, passed through — the proxy's
 * /healthz keeps answering fast. The proxy and the fake provider run as
 * their own processes, so neither this test's client nor the fake's parsing
 * of what it is sent shares the loop being measured; the prober is a third
 * process. Parsing, checking and translating these bodies on the loop held
 * it for 0.1–1.5 s per call.
 */
describe('proxy: multi-MiB calls do not hold its event loop', function () {
  this.timeout(300_000);
  let cp: TestControlPlane;
  let fake: Child;
  let proxy: Child;
  let proxyUrl: string;
  let dir: string;
  let k: SeededKey;

  before(async () => {
    const db = (await openTestStore('pglite'))!;
    await resetStore(db);
    cp = await startTestControlPlane(db);
    dir = mkdtempSync(join(tmpdir(), 'tollgate-loop-'));
    const fakePort = await freePort();
    const fakeUrl = `http://127.0.0.1:${fakePort}`;
    fake = startChild(['--import', 'tsx', 'test/support/fake-upstream/main.ts', '--port', String(fakePort), '--output-tokens', '4'], {});
    await until('the fake provider', fake, async () => (await fetch(`${fakeUrl}/v1/models`)).status < 500);
    const catalog = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, Record<string, string>> };
    // Each provider keeps the formats it speaks, aimed at the fake.
    for (const p of Object.values(catalog.providers)) {
      if (p.chat_completions_base_url) p.chat_completions_base_url = `${fakeUrl}/v1`;
      if (p.messages_base_url) p.messages_base_url = `${fakeUrl}/anthropic`;
      if (p.responses_base_url) p.responses_base_url = `${fakeUrl}/v1`;
    }
    writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
    const port = await freePort();
    proxyUrl = `http://127.0.0.1:${port}`;
    proxy = startChild(['--import', 'tsx', '--import', './test/support/loop-delay.ts', 'bin/proxy.ts'], {
      CONTROL_PLANE_URL: cp.url,
      DATA_PLANE_TOKEN: cp.deps.config.dataPlaneToken,
      MODELS_FILE: join(dir, 'models.json'),
      TEST_PRIMARY_API_KEY: UPSTREAM_SECRET,
      HOST: '127.0.0.1',
      PROXY_PORT: String(port),
      PROXY_DATA_DIR: join(dir, 'proxy'),
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    });
    await until('the proxy', proxy, async () => (await fetch(`${proxyUrl}/readyz`)).status === 200);
    k = await seedKey(cp.deps, { models: ['tg/gpt-direct', 'tg/claude-direct', 'tg/gpt-responses'], balanceUsd: 1_000_000 });
  });

  after(async () => {
    for (const c of [proxy, fake]) c?.process.kill('SIGKILL');
    await cp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function call(path: string, body: Uint8Array<ArrayBuffer>): Promise<{ status: number; text: string }> {
    return fetch(`${proxyUrl}/${k.slug}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${k.secret}`, 'anthropic-version': '2023-06-01' },
      body,
    }).then(async (res) => ({ status: res.status, text: (await res.text()).slice(0, 300) }));
  }

  /** The proxy's loop figures since the last ask (test/support/loop-delay.ts). */
  async function loopDelay(): Promise<LoopFigures> {
    const seen = proxy.output.length;
    proxy.process.kill('SIGUSR2');
    for (let i = 0; i < 100; i++) {
      const line = proxy.output.slice(seen).find((l) => l.startsWith('loop-delay '));
      if (line) return JSON.parse(line.slice('loop-delay '.length)) as LoopFigures;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the proxy did not report its loop delay');
  }

  it('/healthz answers within the bound while two of each multi-MiB call are in flight', async () => {
    const calls = heavyCalls();
    // A small call of each kind first: starting workers and compiling code is not what is measured.
    for (const c of calls) {
      const warm = JSON.parse(new TextDecoder().decode(c.body)) as Record<string, unknown>;
      // ~100 KiB: above PROXY_OFFLOAD_BODY_BYTES, so the workers start now.
      for (const field of ['messages', 'input']) if (Array.isArray(warm[field])) warm[field] = (warm[field] as unknown[]).slice(0, 1001);
      const a = await call(c.path, new TextEncoder().encode(JSON.stringify(warm)));
      expect(a.status, `${c.what}: ${a.text}`).to.equal(200);
    }
    for (const c of calls) expect(c.body.length, c.what).to.be.within(8 * 1024 * 1024, 10 * 1024 * 1024);
    await loopDelay();
    // The prober is a process of its own: this one is busy sending the bodies, which would delay its timers and reads.
    const prober = startChild(['-e', PROBER], { PROBE_URL: `${proxyUrl}/healthz` });
    await until('the prober', prober, () => Promise.resolve(prober.output.includes('probing')));
    const started = performance.now();
    let answers: { status: number; text: string }[];
    try {
      answers = await Promise.all([...calls, ...calls].map((c) => call(c.path, c.body)));
    } finally {
      prober.process.kill('SIGTERM');
    }
    await new Promise((r) => prober.process.once('exit', r));
    const latencies = JSON.parse(prober.output.find((l) => l.startsWith('['))!) as number[];
    const loop = await loopDelay();
    const p = (q: number) => percentile(latencies, q).toFixed(1);
    console.log(
      `      ${answers.length} calls of ~9 MiB in ${(performance.now() - started).toFixed(0)} ms; /healthz ${latencies.length} probes: ` +
        `p50 ${p(50)} ms, p99 ${p(99)} ms, max ${Math.max(...latencies).toFixed(1)} ms; proxy loop delay p50 ${loop.p50} ms, p99 ${loop.p99} ms, max ${loop.max} ms; proxy main thread CPU ${loop.cpuMs} ms`,
    );
    answers.forEach((a, i) => expect(a.status, `${calls[i % calls.length]!.what}: ${a.text}`).to.equal(200));
    expect(latencies.length).to.be.above(20);
    // Measured on the 2-core test machine at load 15-26 (other suites running): with the body
    // work in workers, p99 90-260 ms and max 250-460 ms (the slowest probes match the proxy's
    // GC pauses); with it on the loop (before, load 11-23), p99 470-2060 ms and max 2.0-3.5 s,
    // the proxy's loop held for 1.5-3.7 s at a stretch. The bounds leave room for a loaded CI
    // machine; the max is what the old code fails by the widest margin.
    expect(percentile(latencies, 99), 'p99').to.be.below(400);
    expect(Math.max(...latencies), 'max').to.be.below(1500);
  });
});
