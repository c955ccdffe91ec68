import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANTHROPIC_VERSION, chatBody, messagesBody, responsesBody } from './bodies.js';
import type { LoadTool } from './load.js';
import { freePort, nodeArgs, readyWhenPrinted, startProcess, type Placement, type Proc } from './procs.js';
import type { Report } from './report.js';
import {
  FAST_ALIAS,
  PACED_ALIAS,
  provision,
  removeDataDir,
  startTollgate,
  TRANSLATED_ALIASES,
  UPSTREAM_KEY,
  writeModelsFile,
  type Provisioned,
  type Shape,
  type Tollgate,
} from './tollgate.js';

/** How long each part runs: the full suite takes about 15 minutes on 2 cores (5 of them the soak), --quick about 3. */
export interface Profile {
  name: 'full' | 'quick';
  /**
   * Warm-up of a process that has served nothing yet, long enough for its code to reach
   * steady state: after 1 s at 50 connections, whichever format Tollgate was measured in
   * first cost it ~1.8x the second at one connection (726-778 against 353-437 µs/req);
   * after 5 s, 437 against 346.
   */
  freshWarmS: number;
  /** Warm-up of a process already warmed (a new format, a new kind of load). */
  warmS: number;
  measureS: number;
  soakS: number;
  coldKeys: number;
  scimCreates: number;
  scimFilterQueries: number;
  keyCacheSizes: number[];
  keyCacheLookups: number;
}

export const PROFILES: Record<Profile['name'], Profile> = {
  full: {
    name: 'full',
    freshWarmS: 5,
    warmS: 2,
    measureS: 3,
    soakS: 300,
    coldKeys: 1000,
    scimCreates: 1000,
    scimFilterQueries: 1000,
    keyCacheSizes: [1_000, 100_000, 1_000_000],
    keyCacheLookups: 500_000,
  },
  quick: {
    name: 'quick',
    freshWarmS: 4,
    warmS: 1,
    measureS: 1,
    soakS: 20,
    coldKeys: 100,
    scimCreates: 200,
    scimFilterQueries: 300,
    keyCacheSizes: [1_000, 100_000, 1_000_000],
    keyCacheLookups: 200_000,
  },
};

export type Format = 'chat' | 'messages' | 'responses';
export type SystemName = 'direct' | 'bare' | 'floor' | 'tollgate' | 'portkey' | 'translated' | 'two-hop' | 'whole';

export interface RequestShape {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface System {
  name: SystemName;
  /** The process whose CPU time is charged to this system; undefined for direct. */
  pid: number | undefined;
  /** Tollgate split in two: the control plane's CPU is reported beside the proxy's. */
  controlPlanePid?: number | undefined;
  /** `pid` heads a process tree (`npm start`): its CPU and memory are the whole tree's. */
  tree?: boolean;
  request(format: Format, options?: { stream?: boolean; paced?: boolean; translated?: boolean }): RequestShape;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Starts what a scenario needs, once, and stops everything at the end. */
export class BenchContext {
  readonly dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  private procs: Proc[] = [];
  private upstreams?: { fast: Proc & { url: string }; paced: Proc & { url: string } };
  private modelsFile?: string;
  private tollgateInstance?: { tollgate: Tollgate; provisioned: Provisioned };
  private passThroughs = new Map<string, Proc & { url: string }>();
  private portkeyProc?: Proc & { url: string };

  constructor(
    readonly profile: Profile,
    readonly placement: Placement,
    readonly tool: LoadTool,
    readonly shape: Shape,
    readonly report: Report,
    readonly controlPlaneNice = 0,
  ) {}

  log(message: string): void {
    process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  }

  private async startUpstream(name: string, extra: string[]): Promise<Proc & { url: string }> {
    const port = await freePort();
    const [node, args] = nodeArgs('test/support/fake-upstream/main.ts', ['--port', String(port), ...extra]);
    const proc = await startProcess(name, node, args, { cpus: this.placement.driver, ready: readyWhenPrinted(/listening on/) });
    this.procs.push(proc);
    return Object.assign(proc, { url: `http://127.0.0.1:${port}` });
  }

  /** Two fake upstreams: instant answers (12 tokens), and paced SSE (50 events, 2 ms apart). */
  async upstream() {
    if (!this.upstreams) {
      this.log('starting fake upstreams');
      const fast = await this.startUpstream('fake upstream', []);
      const paced = await this.startUpstream('paced fake upstream', ['--output-tokens', '50', '--event-delay-ms', '2']);
      this.upstreams = { fast, paced };
    }
    return this.upstreams;
  }

  async models(): Promise<string> {
    if (!this.modelsFile) {
      const { fast, paced } = await this.upstream();
      this.modelsFile = writeModelsFile(this.dir, fast.url, paced.url);
    }
    return this.modelsFile;
  }

  direct(): System {
    const up = this.upstreams!;
    return {
      name: 'direct',
      pid: undefined,
      request: (format, o = {}) => upstreamRequest(o.paced ? up.paced.url : up.fast.url, format, 'bench-model', o.stream ?? false),
    };
  }

  /** The bare pass-through in front of the instant upstream, or (`paced`) of the paced SSE one. */
  bare(paced = false): Promise<System> {
    return this.passThrough('bare', paced);
  }

  /** The floor: an undici pass-through that decides nothing, in front of the instant upstream. */
  floor(): Promise<System> {
    return this.passThrough('floor', false);
  }

  private async passThrough(name: 'bare' | 'floor', paced: boolean): Promise<System> {
    const which = `${name} ${paced ? 'paced' : 'fast'}`;
    let proc = this.passThroughs.get(which);
    if (!proc) {
      const upstreams = await this.upstream();
      const started = await startPassThrough(name, upstreams[paced ? 'paced' : 'fast'].url, this.placement.sut);
      this.procs.push(started);
      proc = started;
      this.passThroughs.set(which, proc);
    }
    const url = proc.url;
    return { name, pid: proc.pid, request: (format, o = {}) => upstreamRequest(url, format, 'bench-model', o.stream ?? false) };
  }

  async portkey(): Promise<System> {
    if (!this.portkeyProc) {
      await this.upstream();
      const port = await freePort();
      const proc = await startProcess(
        'portkey gateway',
        process.execPath,
        ['node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${port}`, '--headless'],
        { cpus: this.placement.sut, ready: readyWhenPrinted(/Gateway is running/), env: { NODE_ENV: 'production' } },
      );
      this.procs.push(proc);
      this.portkeyProc = Object.assign(proc, { url: `http://127.0.0.1:${port}` });
    }
    const url = this.portkeyProc.url;
    const fast = this.upstreams!.fast.url;
    return {
      name: 'portkey',
      pid: this.portkeyProc.pid,
      request: (format) => {
        if (format === 'responses') throw new Error('the Portkey comparison is measured on Chat Completions and Messages only');
        return format === 'chat'
          ? {
              url: `${url}/v1/chat/completions`,
              headers: {
                ...JSON_TYPE,
                authorization: `Bearer ${UPSTREAM_KEY}`,
                'x-portkey-provider': 'openai',
                'x-portkey-custom-host': `${fast}/v1`,
              },
              body: chatBody('bench-model'),
            }
          : {
              url: `${url}/v1/messages`,
              headers: {
                ...JSON_TYPE,
                'x-api-key': UPSTREAM_KEY,
                'anthropic-version': ANTHROPIC_VERSION,
                'x-portkey-provider': 'anthropic',
                'x-portkey-custom-host': `${fast}/anthropic/v1`,
              },
              body: messagesBody('bench-model'),
            };
      },
    };
  }

  /** Tollgate with in-process limits on embedded PGlite, provisioned through the public surface. */
  async tollgate(): Promise<{ system: System; tollgate: Tollgate; provisioned: Provisioned }> {
    if (!this.tollgateInstance) {
      const modelsFile = await this.models();
      this.log(`starting tollgate (${this.shape})`);
      const tollgate = await startTollgate({ shape: this.shape, placement: this.placement, modelsFile, controlPlaneNice: this.controlPlaneNice });
      this.procs.push(...(tollgate.controlPlane ? [tollgate.controlPlane] : []), tollgate.proxy);
      this.removeLater(tollgate.dataDir);
      const provisioned = await provision(tollgate);
      this.tollgateInstance = { tollgate, provisioned };
    }
    const { tollgate, provisioned } = this.tollgateInstance;
    return { system: tollgateSystem(tollgate, provisioned.org.workspace_slug, provisioned.key), tollgate, provisioned };
  }

  /** Stops the shared Tollgate (e.g. before restarting it another way over the same data). */
  async stopTollgate(): Promise<{ dataDir: string } | undefined> {
    const t = this.tollgateInstance;
    if (!t) return undefined;
    this.tollgateInstance = undefined;
    await t.tollgate.stop();
    return { dataDir: t.tollgate.dataDir };
  }

  track(...procs: Proc[]): void {
    this.procs.push(...procs);
  }

  /** Where each long-lived process actually ran, as the kernel reports its affinity. */
  placementCheck(): { name: string; pid: number; cores: string }[] {
    return this.procs.map((p) => ({ name: p.name, pid: p.pid, cores: p.cpusAllowed }));
  }

  async close(): Promise<void> {
    // Newest first, one at a time: a proxy drains its usage reports to a control plane still running
    // (stopped together, it waited out its grace and was killed, and wrote no BENCH_CPU_PROF_DIR profile).
    for (const p of this.procs.reverse()) await p.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  removeLater(dataDir: string): void {
    process.once('exit', () => removeDataDir(dataDir));
  }
}

/**
 * A pass-through proxy in front of `upstream`, on `cpus`: `bare` (node:http +
 * http.request, the reference users know) or `floor` (node:http + undici, the
 * proxy's own stack with no decision).
 */
export async function startPassThrough(name: 'bare' | 'floor', upstream: string, cpus: string | undefined): Promise<Proc & { url: string }> {
  const port = await freePort();
  const [node, args] = nodeArgs(`bench/${name}-proxy.ts`, ['--port', String(port), '--upstream', upstream]);
  const proc = await startProcess(`${name} proxy → ${upstream}`, node, args, { cpus, ready: readyWhenPrinted(/listening on/) });
  return Object.assign(proc, { url: `http://127.0.0.1:${port}` });
}

/** Sends one request the way the load generator will; returns why it failed, or undefined when it answered 2xx. */
export async function probe(req: RequestShape): Promise<string | undefined> {
  try {
    const res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return res.ok ? undefined : `HTTP ${res.status}: ${text.slice(0, 300)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

export function upstreamRequest(origin: string, format: Format, model: string, stream: boolean): RequestShape {
  if (format === 'responses') {
    return {
      url: `${origin}/v1/responses`,
      headers: { ...JSON_TYPE, authorization: `Bearer ${UPSTREAM_KEY}` },
      body: responsesBody(model, { stream }),
    };
  }
  return format === 'chat'
    ? { url: `${origin}/v1/chat/completions`, headers: { ...JSON_TYPE, authorization: `Bearer ${UPSTREAM_KEY}` }, body: chatBody(model, { stream }) }
    : {
        url: `${origin}/anthropic/v1/messages`,
        headers: { ...JSON_TYPE, 'x-api-key': UPSTREAM_KEY, 'anthropic-version': ANTHROPIC_VERSION },
        body: messagesBody(model, { stream }),
      };
}

export function tollgateSystem(tollgate: Tollgate, slug: string, key: string): System {
  return {
    name: 'tollgate',
    pid: tollgate.proxy.pid,
    controlPlanePid: tollgate.controlPlane?.pid,
    request: (format, o = {}) => tollgateRequest(tollgate.edgeUrl, slug, key, format, o),
  };
}

/** Tollgate calling aliases whose provider lacks the client's format: every call is translated. */
export function translatedSystem(tollgate: System): System {
  return {
    ...tollgate,
    name: 'translated',
    request: (format, o = {}) => tollgate.request(format, { ...o, translated: true }),
  };
}

export interface TollgateRequestOptions {
  stream?: boolean;
  paced?: boolean;
  translated?: boolean;
  /** Call this alias instead of the one `paced` and `translated` pick. */
  alias?: string;
}

export function tollgateRequest(edgeUrl: string, slug: string, key: string, format: Format, o: TollgateRequestOptions = {}): RequestShape {
  const alias = o.alias ?? (o.translated ? TRANSLATED_ALIASES[o.paced ? 'paced' : 'fast'][format] : o.paced ? PACED_ALIAS : FAST_ALIAS);
  if (format === 'responses') {
    return {
      url: `${edgeUrl}/${slug}/v1/responses`,
      headers: { ...JSON_TYPE, authorization: `Bearer ${key}` },
      body: responsesBody(alias, { stream: o.stream }),
    };
  }
  return format === 'chat'
    ? {
        url: `${edgeUrl}/${slug}/v1/chat/completions`,
        headers: { ...JSON_TYPE, authorization: `Bearer ${key}` },
        body: chatBody(alias, { stream: o.stream }),
      }
    : {
        url: `${edgeUrl}/${slug}/anthropic/v1/messages`,
        headers: { ...JSON_TYPE, 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION },
        body: messagesBody(alias, { stream: o.stream }),
      };
}
