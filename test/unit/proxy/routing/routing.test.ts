import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createAffinity, sessionOf } from '../../../../proxy/routing/affinity.js';
import { createRedisAffinity } from '../../../../proxy/routing/affinity-redis.js';
import { createLogger } from '../../../../shared/logger.js';
import { createBalancer } from '../../../../proxy/routing/balance.js';
import { chainOf } from '../../../../proxy/routing/deployments.js';
import { firstEventIsError } from '../../../../proxy/routing/first-byte.js';
import { createDeploymentHealth, retryAfterMs } from '../../../../proxy/routing/health.js';
import { modelFromEntry, type ModelCatalog, type ModelConfig } from '../../../../shared/models.js';

function model(alias: string, weights: (number | undefined)[], fallbacks: string[] = []): ModelConfig {
  return modelFromEntry({
    alias,
    deployments: weights.map((weight, i) => ({ provider: `p${i}`, upstream_model: `m${i}`, weight })),
    fallbacks,
    input_usd_per_mtok: 1,
    output_usd_per_mtok: 1,
    max_output_tokens: 100,
  });
}

describe('routing: balancer', () => {
  it('smooth weighted round-robin: 3:1 interleaved, exact over any multiple of the total', () => {
    const b = createBalancer();
    const m = model('tg/w', [3, 1]);
    const firsts = Array.from({ length: 8 }, () => b.order(m)[0]);
    expect(firsts).to.deep.equal([0, 0, 1, 0, 0, 0, 1, 0]);
    const counts = [0, 0];
    for (let i = 0; i < 400; i++) counts[b.order(m)[0]!]!++;
    expect(counts).to.deep.equal([300, 100]);
  });

  it('each pick is followed by the others, heaviest first, to fail over to', () => {
    const b = createBalancer();
    const m = model('tg/w3', [1, 5, 2]);
    expect(b.order(m)).to.deep.equal([1, 2, 0]);
  });

  it('without weights: the file order, every time', () => {
    const b = createBalancer();
    const m = model('tg/o', [undefined, undefined, undefined]);
    for (let i = 0; i < 3; i++) expect(b.order(m)).to.deep.equal([0, 1, 2]);
  });
});

describe('routing: deployment health (fake clock)', () => {
  let t = 1_000_000;
  const now = () => t;

  it('retry-after keeps a deployment out exactly that long', () => {
    const h = createDeploymentHealth({ failures: 3, cooldownMs: 10_000 }, now);
    h.failed('a', 'status_429', 2_000);
    expect(h.check(['a', 'b'])).to.deep.equal([t + 2_000, 0]);
    t += 1_999;
    expect((h.check(['a']) as number[])[0]).to.be.greaterThan(0);
    t += 1;
    expect(h.check(['a'])).to.deep.equal([0]);
  });

  it('N failures in a row open the circuit; after the cooldown one probe, then closed on success', () => {
    const h = createDeploymentHealth({ failures: 2, cooldownMs: 5_000 }, now);
    h.failed('a', 'status_500', undefined);
    expect(h.check(['a'])).to.deep.equal([0]);
    h.failed('a', 'reset', undefined);
    expect(h.check(['a'])).to.deep.equal([t + 5_000]);
    t += 5_000;
    // Half-open: the first caller is the probe, the next waits for its verdict.
    expect(h.check(['a'])).to.deep.equal([0]);
    expect((h.check(['a']) as number[])[0]).to.be.greaterThan(0);
    h.succeeded('a');
    expect(h.check(['a'])).to.deep.equal([0]);
    expect(h.check(['a'])).to.deep.equal([0]);
  });

  it('a failed probe opens the circuit again', () => {
    const h = createDeploymentHealth({ failures: 1, cooldownMs: 1_000 }, now);
    h.failed('a', 'refused', undefined);
    t += 1_000;
    expect(h.check(['a'])).to.deep.equal([0]);
    h.failed('a', 'refused', undefined);
    expect(h.check(['a'])).to.deep.equal([t + 1_000]);
  });

  it('a success resets the failures in a row', () => {
    const h = createDeploymentHealth({ failures: 2, cooldownMs: 1_000 }, now);
    h.failed('a', 'status_502', undefined);
    h.succeeded('a');
    h.failed('a', 'status_502', undefined);
    expect(h.check(['a'])).to.deep.equal([0]);
  });

  it('reports each state for the console: healthy with failures, cooling, open, half-open (probe due, probe in flight), then nothing', async () => {
    const h = createDeploymentHealth({ failures: 2, cooldownMs: 5_000 }, now);
    const ids = ['a', 'b', 'quiet'];
    h.failed('a', 'status_500', undefined);
    h.failed('b', 'status_429', 3_000);
    expect(await h.report(ids)).to.deep.equal([
      { id: 'a', state: 'healthy', back_in_ms: 0, failures: 1 },
      { id: 'b', state: 'cooling', back_in_ms: 3_000, failures: 1 },
    ]);
    h.failed('a', 'reset', undefined);
    expect((await h.report(['a']))[0]).to.deep.equal({ id: 'a', state: 'open', back_in_ms: 5_000, failures: 2 });
    t += 5_000;
    expect((await h.report(['a']))[0]!.state).to.equal('half_open');
    expect(h.check(['a'])).to.deep.equal([0]);
    // The probe is in flight: still half-open, though the others are told to wait.
    expect((await h.report(['a']))[0]!.state).to.equal('half_open');
    h.succeeded('a');
    h.succeeded('b');
    expect(await h.report(ids)).to.deep.equal([]);
  });

  it('retry-after: seconds or an HTTP date', () => {
    expect(retryAfterMs('3', 0)).to.equal(3_000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).to.equal(6_000);
    expect(retryAfterMs('soon', 0)).to.equal(undefined);
    expect(retryAfterMs(undefined, 0)).to.equal(undefined);
  });
});

describe('routing: the first event of a stream', () => {
  it('an Anthropic error event after the 200 is an error', () => {
    expect(firstEventIsError(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n'))).to.equal(true);
  });
  it('an OpenAI error chunk is an error; an answer chunk is not', () => {
    expect(firstEventIsError(Buffer.from('data: {"error":{"message":"x"}}\n\n'))).to.equal(true);
    expect(firstEventIsError(Buffer.from('data: {"id":"c","choices":[{"delta":{"role":"assistant"}}]}\n\n'))).to.equal(false);
    expect(firstEventIsError(Buffer.from('event: message_start\ndata: {"type":"message_start"}\r\n\r\n'))).to.equal(false);
  });
  it('undecided until the first event is whole', () => {
    expect(firstEventIsError(Buffer.from('event: error\ndata: {"type":"err'))).to.equal(undefined);
  });
});

describe('routing: fallback chain and affinity', () => {
  it("fallbacks in order, a fallback's own right after it, the ones the team may not call left out", () => {
    const models = new Map<string, ModelConfig>();
    for (const m of [
      model('tg/a', [undefined], ['tg/b', 'tg/c']),
      model('tg/b', [undefined], ['tg/d']),
      model('tg/c', [undefined]),
      model('tg/d', [undefined]),
    ]) {
      models.set(m.alias, m);
    }
    const catalog: ModelCatalog = { aliasPrefix: 'tg', providers: new Map(), models };
    expect(chainOf(models.get('tg/a')!, catalog, ['tg/a', 'tg/b', 'tg/c', 'tg/d']).map((m) => m.alias)).to.deep.equal([
      'tg/a',
      'tg/b',
      'tg/d',
      'tg/c',
    ]);
    expect(chainOf(models.get('tg/a')!, catalog, ['tg/a', 'tg/c', 'tg/d']).map((m) => m.alias)).to.deep.equal(['tg/a', 'tg/c']);
  });

  it('affinity forgets the least recently used session first', () => {
    const a = createAffinity(2);
    a.set('tg/x', 's1', 1);
    a.set('tg/x', 's2', 0);
    expect(a.get('tg/x', 's1')).to.equal(1);
    a.set('tg/x', 's3', 1);
    expect(a.get('tg/x', 's2')).to.equal(undefined);
    expect(a.get('tg/x', 's1')).to.equal(1);
  });

  it("shared affinity: Redis answers first; while Redis is down or has lost the key, the proxy's own memory answers", async () => {
    const store = new Map<string, string>();
    let up = true;
    const fake = {
      get status() {
        return up ? 'ready' : 'reconnecting';
      },
      get: async (k: string) => {
        if (!up) throw new Error('Connection is closed.');
        return store.get(k) ?? null;
      },
      set: async (k: string, v: number) => {
        if (!up) throw new Error('Connection is closed.');
        store.set(k, String(v));
        return 'OK';
      },
    };
    const a = createRedisAffinity(fake as unknown as Redis, 'p', createAffinity(10), 60_000, createLogger('silent', 'test'));
    a.set('tg/x', 's1', 1);
    expect(await a.get('tg/x', 's1')).to.equal(1);
    // Another proxy moved the session: Redis wins over this proxy's memory.
    store.set([...store.keys()][0]!, '0');
    expect(await a.get('tg/x', 's1')).to.equal(0);
    expect([...store.keys()][0]).not.to.include('s1');
    up = false;
    a.set('tg/x', 's2', 1);
    expect(a.get('tg/x', 's2')).to.equal(1);
    expect(a.get('tg/x', 's1')).to.equal(1);
    up = true;
    store.clear();
    expect(await a.get('tg/x', 's2')).to.equal(1);
    expect(await a.get('tg/x', 'never')).to.equal(undefined);
  });
});

describe('routing: a session is named within its workspace', () => {
  const call = (body: Record<string, unknown>) => ({ alias: 'a', stream: false, maxTokens: undefined, choices: 1, body, raw: Buffer.alloc(0) });

  it('the same session header, prompt cache key or previous response in two workspaces names two sessions', () => {
    const named = [
      [{ 'x-claude-code-session-id': 's1' }, {}],
      [{}, { prompt_cache_key: 'k1' }],
      [{}, { previous_response_id: 'resp_1' }],
    ] as const;
    for (const [headers, body] of named) {
      const a = sessionOf(headers, call(body), 'ws-a');
      const b = sessionOf(headers, call(body), 'ws-b');
      expect(a).to.be.a('string');
      expect(a).to.not.equal(b);
      expect(sessionOf(headers, call(body), 'ws-a')).to.equal(a);
    }
    expect(sessionOf({}, call({}), 'ws-a')).to.equal(undefined);
  });
});
