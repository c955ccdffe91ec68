/**
 * The edge's own CPU per call, in process, for two builds side by side in
 * alternating rounds: each build's compiled edge handler (its key cache,
 * in-process limits and hold store, metrics and observer as the runtime
 * wires them) driven with requests that are only objects (no sockets, no
 * HTTP parser) against an upstream that answers on the next turn of the
 * loop. Settlement is a stub that hands the hold back, the same for both.
 * What differs between the builds is their admission path and bookkeeping,
 * measured to a fraction of a microsecond where end-to-end runs on a shared
 * machine move by tens.
 *
 *   npx tsx bench/edge-cost.ts --base /tmp/base [--head .] [--rounds 8] [--calls 20000] [--format chat]
 *
 * Each checkout needs a built `dist/` (`npm run build`). A third system,
 * `null`, answers every request at once without the edge: what the harness
 * itself costs per call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { IncomingMessage as Incoming, ServerResponse as Response } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Pool } from 'undici';
import type * as ConfigModule from '../shared/config.js';
import type * as LoggerModule from '../shared/logger.js';
import type * as SharedMetricsModule from '../shared/metrics.js';
import type { ResolvedKey } from '../shared/contract/keys.js';
import type * as EdgeModule from '../proxy/edge/index.js';
import type * as KeyCacheModule from '../proxy/key-cache.js';
import type * as RateLimitsModule from '../proxy/rate-limits.js';
import type * as ObserveModule from '../proxy/observe.js';
import type * as MetricsModule from '../proxy/metrics.js';
import type * as BodyWorkModule from '../proxy/body-work/index.js';
import type * as RoutingModule from '../proxy/routing/index.js';
import type * as HoldsModule from '../proxy/money/holds.js';
import type { HeldCall } from '../proxy/money/metering.js';
import { ANTHROPIC_VERSION, chatBody, messagesBody } from './lib/bodies.js';
import { FAST_ALIAS, writeModelsFile } from './lib/tollgate.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    head: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '8' },
    calls: { type: 'string', default: '20000' },
    format: { type: 'string', default: 'chat' },
    concurrency: { type: 'string', default: '50' },
    only: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const CONCURRENCY = Number(values.concurrency);
const FORMAT = values.format as 'chat' | 'messages';
const SLUG = 'bench';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A socket that takes every write at once and never reads. */
class Sink extends Duplex {
  override _read(): void {}
  override _write(_c: unknown, _e: BufferEncoding, cb: () => void): void {
    cb();
  }
  override _writev(_c: unknown, cb: () => void): void {
    cb();
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
}

const ANSWERS = {
  chat:
    '{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"bench-model","choices":[{"index":0,"message":' +
    '{"role":"assistant","content":"one two three four five six seven eight nine ten eleven twelve"},"finish_reason":"stop"}],' +
    '"usage":{"prompt_tokens":250,"completion_tokens":12,"total_tokens":262}}',
  messages:
    '{"id":"msg_1","type":"message","role":"assistant","model":"bench-model","content":[{"type":"text","text":"one two three four five six seven eight nine ten eleven twelve"}],' +
    '"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":250,"output_tokens":12}}',
};

/** An undici pool as the forward step uses one: the answer comes whole on the next turn of the loop. */
function fakePool(format: 'chat' | 'messages') {
  const body = Buffer.from(ANSWERS[format]);
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length), date: new Date().toUTCString() };
  return {
    dispatch(_opts: unknown, handler: Record<string, (...a: unknown[]) => void>): boolean {
      const c = { aborted: false, paused: false, abort() {}, pause() {}, resume() {} };
      setImmediate(() => {
        handler.onRequestStart?.(c, {});
        handler.onResponseStart!(c, 200, headers, 'OK');
        handler.onResponseData!(c, body);
        handler.onResponseEnd!(c, {});
      });
      return true;
    },
  };
}

/** The modules of a build the harness wires, typed as this checkout's (a base build has the same exports). */
interface Build {
  config: typeof ConfigModule;
  logger: typeof LoggerModule;
  metricsShared: typeof SharedMetricsModule;
  edge: typeof EdgeModule;
  keyCache: typeof KeyCacheModule;
  limits: typeof RateLimitsModule;
  observe: typeof ObserveModule;
  metrics: typeof MetricsModule;
  bodyWork: typeof BodyWorkModule;
  routing: typeof RoutingModule;
  holds: typeof HoldsModule;
}

const BUILD_FILES: Record<keyof Build, string> = {
  config: 'shared/config.js',
  logger: 'shared/logger.js',
  metricsShared: 'shared/metrics.js',
  edge: 'proxy/edge/index.js',
  keyCache: 'proxy/key-cache.js',
  limits: 'proxy/rate-limits.js',
  observe: 'proxy/observe.js',
  metrics: 'proxy/metrics.js',
  bodyWork: 'proxy/body-work/index.js',
  routing: 'proxy/routing/index.js',
  holds: 'proxy/money/holds.js',
};

async function buildAt(dir: string): Promise<Build> {
  const entries = await Promise.all(
    Object.entries(BUILD_FILES).map(
      async ([name, file]) => [name, (await import(pathToFileURL(join(resolve(dir), 'dist', file)).href)) as unknown] as const,
    ),
  );
  return Object.fromEntries(entries) as unknown as Build;
}

const ABANDONED_NONE = { complete: 0, error: 0, broken: 0, timeout: 0, over_limit: 0 };

async function edgeOf(dir: string, modelsFile: string, outbox: string): Promise<Handler> {
  const b = await buildAt(dir);
  const cfg = b.config.loadConfig(
    {
      MODELS_FILE: modelsFile,
      LOG_LEVEL: 'warn',
      CONTROL_PLANE_URL: 'http://127.0.0.1:1',
      DATA_PLANE_TOKEN: 'x'.repeat(43),
      PROXY_DATA_DIR: outbox,
      BENCH_UPSTREAM_KEY: 'sk-bench',
    },
    'proxy',
  );
  const log = b.logger.createLogger('warn', 'edge-cost', false);
  const registry = b.metricsShared.createMetricsRegistry();
  const metrics = b.metrics.createProxyMetrics(registry, {});
  const key: ResolvedKey = {
    id: 'key-1',
    org_id: 'o',
    workspace_id: 'w',
    workspace_slug: SLUG,
    team_id: 't',
    owner_user_id: null,
    revoked: false,
    expires_at: null,
    rpm: 100_000_000,
    tpm: 2_000_000_000,
    models: [FAST_ALIAS],
    key_remaining_micros: 1_000_000_000_000,
    key_version: 0,
    balance_micros: 1_000_000_000_000,
    balance_version: 1,
  };
  const holds = b.holds.createMemoryHoldStore(600_000);
  const back = (c: HeldCall) => void holds.release(c.requestId, { workspaceId: c.workspaceId, keyId: c.keyId });
  const pool = fakePool(FORMAT) as unknown as Pool;
  const edge = b.edge.createEdgeHandler({
    config: cfg,
    logger: log,
    // No cloud provider in the bench's catalog.
    authorizers: { of: () => undefined },
    keys: b.keyCache.createKeyCache({ resolveKey: () => Promise.resolve({ key }) }, cfg.proxy, log),
    limits: b.limits.createRateLimits(undefined, 'bench'),
    holds,
    metering: {
      start: () => Promise.resolve(),
      admitted: () => undefined,
      settle: (c) => (back(c), 1),
      release: back,
      refused: () => undefined,
      full: () => false,
      wake: () => undefined,
      drain: () => Promise.resolve(),
      close: () => Promise.resolve(),
    },
    // The fake answers always carry usage; a base build without this field ignores it.
    usageWarnings: { missing: () => undefined, reported: () => undefined },
    upstreamAuth: { secretFor: (p) => p.api_key ?? '' },
    pool: () => pool,
    observe: b.observe.createEdgeObserver({ metrics, accessLog: cfg.ops.accessLog ? log.child({ access: true }) : undefined }),
    now: Date.now,
    routing: b.routing.createRouting(cfg.proxy, undefined, registry, Date.now, log),
    bodies: b.bodyWork.bodyWorkOf(cfg.proxy),
    // Inline, not from the build: a base build older than these parts ignores them. No client leaves, no id is continued.
    abandoned: {
      readMs: 1,
      stopped: false,
      take: () => false,
      end: () => undefined,
      refused: () => undefined,
      stop: () => undefined,
      stats: () => ({ running: 0, ended: ABANDONED_NONE }),
    },
    responseIds: { record: () => undefined, ownerOf: () => undefined },
  });
  return edge.handle;
}

/** Answers at once, without the edge: the harness's own cost per call. */
const nullHandler: Handler = (req, res) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('{}');
  });
};

function requestShape(key: string) {
  const body = Buffer.from(FORMAT === 'chat' ? chatBody(FAST_ALIAS) : messagesBody(FAST_ALIAS));
  const url = FORMAT === 'chat' ? `/${SLUG}/v1/chat/completions` : `/${SLUG}/anthropic/v1/messages`;
  const auth: [string, string] = FORMAT === 'chat' ? ['authorization', `Bearer ${key}`] : ['x-api-key', key];
  const raw = ['Host', '127.0.0.1:8080', 'Content-Type', 'application/json', auth[0], auth[1], 'Content-Length', String(body.length)];
  if (FORMAT === 'messages') raw.push('anthropic-version', ANTHROPIC_VERSION);
  return { body, url, raw };
}

/** `calls` requests through `handle`, `CONCURRENCY` at a time; resolves with the process's CPU µs per call. */
function drive(handle: Handler, shape: ReturnType<typeof requestShape>, calls: number): Promise<{ cpuUs: number; failed: number }> {
  return new Promise((done) => {
    let started = 0;
    let finished = 0;
    let failed = 0;
    const t0 = process.cpuUsage();
    const one = (): void => {
      started++;
      const socket = new Sink();
      const req = new Incoming(socket as never);
      req.method = 'POST';
      req.url = shape.url;
      req.rawHeaders = shape.raw;
      for (let i = 0; i < shape.raw.length; i += 2) req.headers[shape.raw[i]!.toLowerCase()] = shape.raw[i + 1];
      const res = new Response(req);
      res.assignSocket(socket as never);
      res.once('finish', () => {
        if (res.statusCode !== 200) failed++;
        if (++finished === calls) {
          const u = process.cpuUsage(t0);
          done({ cpuUs: (u.user + u.system) / calls, failed });
        } else if (started < calls) one();
      });
      handle(req, res);
      // As Node's parser does: the body of a small request follows its head within the same read.
      req.push(shape.body);
      req.complete = true;
      req.push(null);
    };
    for (let i = 0; i < CONCURRENCY && i < calls; i++) one();
  });
}

const secretsMod = (await import(pathToFileURL(join(resolve(values.head), 'dist/shared/secrets.js')).href)) as { generateSecret(k: string): string };
const secret = secretsMod.generateSecret('apiKey');
const dir = mkdtempSync(join(tmpdir(), 'edge-cost-'));
const modelsFile = writeModelsFile(dir, 'http://127.0.0.1:1', 'http://127.0.0.1:1');
const systems: { name: string; handle: Handler }[] = [{ name: 'null', handle: nullHandler }];
if (values.base) systems.push({ name: 'base', handle: await edgeOf(values.base, modelsFile, join(dir, 'base')) });
systems.push({ name: 'head', handle: await edgeOf(values.head, modelsFile, join(dir, 'head')) });
const chosen = values.only ? systems.filter((s) => values.only!.split(',').includes(s.name)) : systems;
const shape = requestShape(secret);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
process.stdout.write(`edge-cost ${FORMAT}, ${CALLS} calls × ${ROUNDS} rounds, ${CONCURRENCY} in flight; load ${load()}\n`);
// Warm-up: the key cache's first miss, JIT, and the metrics' series.
for (const s of chosen) {
  const w = await drive(s.handle, shape, Math.min(CALLS, 20_000));
  if (w.failed) throw new Error(`${s.name}: ${w.failed} calls failed in the warm-up`);
}
const per = new Map(chosen.map((s) => [s.name, [] as number[]]));
for (let r = 0; r < ROUNDS; r++) {
  const line: string[] = [];
  for (let i = 0; i < chosen.length; i++) {
    const s = chosen[(i + r) % chosen.length]!;
    const { cpuUs, failed } = await drive(s.handle, shape, CALLS);
    per.get(s.name)!.push(cpuUs);
    line.push(`${s.name} ${cpuUs.toFixed(2)}${failed ? ` (${failed} failed)` : ''}`);
  }
  process.stdout.write(`round ${r + 1}: ${line.join('  ')}\n`);
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)]!;
const median = (xs: number[]) => quantile(xs, 0.5);
// Other work on the machine only ever adds to a round: the low quartile is the steadiest figure on a busy one.
for (const [label, q] of [
  ['median', 0.5],
  ['low quartile', 0.25],
] as const) {
  const nul = per.has('null') ? quantile(per.get('null')!, q) : 0;
  const summary = [...per].map(
    ([name, xs]) => `${name} ${quantile(xs, q).toFixed(2)}${name === 'null' ? '' : ` (edge ${(quantile(xs, q) - nul).toFixed(2)})`}`,
  );
  process.stdout.write(`${label} µs/call: ${summary.join(', ')}\n`);
}
process.stdout.write(`load ${load()}\n`);
if (per.has('base') && per.has('head')) {
  const d = per.get('head')!.map((h, i) => h - per.get('base')![i]!);
  process.stdout.write(`head − base per round: median ${median(d).toFixed(2)} µs (${d.map((x) => x.toFixed(1)).join(' ')})\n`);
}
process.exit(0);
