import { expect } from 'chai';
import type { Behavior } from '../../support/fake-upstream/types.js';
import { moneyOf, seedKey } from '../../support/data-plane.js';
import { DEPLOYMENT_ALIASES, resetFakes, servedBy, startDeploymentPlane, type DeploymentPlane } from '../../support/deployment-plane.js';
import { edgeCall, FORMATS, modelBody, type EdgeAnswer } from '../../support/edge-calls.js';
import { describeEachStore } from '../../support/stores.js';
import type { WireFormat } from '../../../proxy/call.js';
import { usage_aggregate } from '../../../control-plane/stores/usage.js';
import { pino } from 'pino';

/** How each format's stream ends, and how it starts (one start per answer: no second attempt leaked through). */
const STREAM_END: Record<WireFormat, string> = {
  chat: 'data: [DONE]',
  messages: 'event: message_stop',
  responses: 'event: response.completed',
  gemini: '"finishReason"',
};
const STREAM_START: Record<WireFormat, string> = {
  chat: '"role"',
  messages: 'message_start',
  responses: 'event: response.created',
  // Gemini's stream has no opening event, and every chunk is a candidate: its first text starts an answer.
  gemini: '"text":"tok1"',
};
/** What shows a failure in each format's stream: a Responses event carries `"error":null` in each response it shows, its failure is an event of its own. */
const STREAM_FAILURE: Record<WireFormat, string> = {
  chat: 'error',
  messages: 'error',
  responses: 'event: response.failed',
  gemini: 'error',
};

/** A whole, clean answer in the client's format: a JSON body, or a stream that ends as its format ends. */
function expectClean(format: WireFormat, stream: boolean, a: EdgeAnswer): void {
  expect(a.status, a.text).to.equal(200);
  if (!stream) {
    expect(a.body, a.text).to.be.an('object');
    return;
  }
  expect(a.text).to.include(STREAM_END[format]);
  expect(a.text).not.to.include(STREAM_FAILURE[format]);
}

const FAILURES: { name: string; behavior: Behavior | undefined; alias?: string; streamOnly?: boolean }[] = [
  { name: 'connection refused', behavior: undefined, alias: 'tg/dead-first' },
  { name: 'connection reset before the headers', behavior: { kind: 'drop' } },
  { name: 'stall past the time limit', behavior: { kind: 'stall', when: 'before-headers' } },
  ...[429, 500, 502, 503, 504, 529].map((status) => ({ name: `${status}`, behavior: { kind: 'error', status } as Behavior })),
  { name: 'a stream whose first event is an error', behavior: { kind: 'stream-error' }, streamOnly: true },
];

describeEachStore('routing: failover before the first byte', (store) => {
  let dp: DeploymentPlane;
  /** The proxy's log lines (the access log among them), as JSON. */
  const lines: Record<string, unknown>[] = [];
  before(async () => {
    dp = await startDeploymentPlane(store, {
      logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }),
      // Failure kinds one after the other must not open a circuit here (circuits: cooldown.test.ts).
      // Responses kept at the provider, so that a previous_response_id the workspace was issued may be continued.
      env: {
        PROXY_DEPLOYMENT_FAILURES: '1000',
        PROXY_UPSTREAM_TTFB_MS: '300',
        PROXY_UPSTREAM_HEADERS_TIMEOUT_MS: '700',
        PROXY_RESPONSES_STORE: 'true',
      },
    });
  });
  beforeEach(() => resetFakes(dp.fakes));
  after(() => dp.close());

  const seed = () => seedKey(dp.cp.deps, { models: DEPLOYMENT_ALIASES });
  const proxy = () => dp.proxies[0]!;

  /** What one call costs on a fresh key: its spend once settled. */
  async function billOf(format: WireFormat, alias: string, stream: boolean, before?: () => void): Promise<{ answer: EdgeAnswer; spend: number }> {
    const k = await seed();
    before?.();
    const answer = await edgeCall(proxy().url, format, k.slug, k.secret, modelBody(format, { model: alias, stream }));
    await proxy().drain();
    return { answer, spend: (await moneyOf(dp.cp.deps, k)).spend };
  }

  it('weights 3:1 spread 400 calls exactly 300/100, interleaved', async () => {
    const k = await seed();
    for (let i = 0; i < 400; i++) {
      const a = await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/weighted' }));
      expect(a.status).to.equal(200);
    }
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 300, b: 100, c: 0 });
  });

  it('GET /v1/models lists an alias of three deployments once', async () => {
    const k = await seed();
    const res = await fetch(`${proxy().url}/${k.slug}/v1/models`, { headers: { authorization: `Bearer ${k.secret}` } });
    const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids.filter((id) => id === 'tg/three')).to.have.length(1);
    expect(ids).not.to.include('m-b');
  });

  it('without weights, the first deployment takes every call while healthy; the answer names who served', async () => {
    const k = await seed();
    for (let i = 0; i < 5; i++) {
      const a = await edgeCall(proxy().url, 'messages', k.slug, k.secret, modelBody('messages', { model: 'tg/three' }));
      expect(a.status).to.equal(200);
      expect(a.headers.get('x-tollgate-model')).to.equal('tg/three');
      expect(a.headers.get('x-tollgate-deployment')).to.equal('a/m-a');
    }
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 5, b: 0, c: 0 });
  });

  for (const [how, sessionFor] of [
    ['x-claude-code-session-id', (s: string) => ({ headers: { 'x-claude-code-session-id': s }, body: {} })],
    ['prompt_cache_key', (s: string) => ({ headers: {}, body: { prompt_cache_key: s } })],
  ] as const) {
    it(`a session (${how}) stays on the deployment that served its first call`, async () => {
      const k = await seed();
      // Four fresh sessions over 3:1 weights: exactly one lands on b.
      let onB: string | undefined;
      for (let i = 0; i < 4; i++) {
        const session = `${how}-${i}-${Date.now()}`;
        const s = sessionFor(session);
        const before = dp.fakes.b.requests.length;
        await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/weighted', ...s.body }), { headers: s.headers });
        if (dp.fakes.b.requests.length > before) onB = session;
      }
      expect(onB).to.be.a('string');
      resetFakes(dp.fakes);
      const s = sessionFor(onB!);
      for (let i = 0; i < 6; i++) {
        await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/weighted', ...s.body }), { headers: s.headers });
      }
      expect(servedBy(dp.fakes)).to.deep.equal({ a: 0, b: 6, c: 0 });
    });
  }

  it('a Responses call continuing an earlier response (previous_response_id) stays on the deployment that served the first', async () => {
    const k = await seed();
    const respond = (previous?: string) =>
      edgeCall(proxy().url, 'responses', k.slug, k.secret, { model: 'tg/weighted', input: 'Go on.', previous_response_id: previous });
    // Ids this workspace was issued (only those are forwarded: docs/proxy.md, "Responses state belongs to its workspace").
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await respond()).body.id as string);
    // Four ids continued for the first time over 3:1 weights: exactly one lands on b.
    let onB: string | undefined;
    for (const id of ids) {
      const before = dp.fakes.b.requests.length;
      const r = await respond(id);
      expect(r.status, r.text).to.equal(200);
      if (dp.fakes.b.requests.length > before) onB = id;
    }
    expect(onB).to.be.a('string');
    resetFakes(dp.fakes);
    for (let i = 0; i < 6; i++) expect((await respond(onB!)).headers.get('x-tollgate-deployment')).to.equal('b/m-b');
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 0, b: 6, c: 0 });
  });

  it('metrics per deployment: attempts by how they ended, failures by reason, each attempt timed', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 503 });
    expect((await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/ordered' }))).status).to.equal(200);
    const text = await proxy().metrics!.metrics();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(value('tollgate_proxy_deployment_failures_total{deployment="a/m-a",reason="status_503"}')).to.be.at.least(1);
    expect(value('tollgate_proxy_deployment_attempts_total{deployment="a/m-a",outcome="retry"}')).to.be.at.least(1);
    expect(value('tollgate_proxy_deployment_attempts_total{deployment="b/m-b",outcome="complete"}')).to.be.at.least(1);
    expect(value('tollgate_proxy_deployment_attempt_seconds_count{deployment="b/m-b"}')).to.be.at.least(1);
  });

  it('the access log line names the deployment that served and how many were tried', async () => {
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 502 });
    const a = await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/ordered' }));
    const id = a.headers.get('x-request-id');
    const line = lines.find((l) => l.msg === 'edge request' && l.requestId === id);
    expect(line, JSON.stringify(lines.slice(-2))).to.include({ deployment: 'b/m-b', attempts: 2, status: 200 });
  });

  it("the one hold is sized for the dearest alias of the chain: a budget that fits the alias's own worst case but not its fallback's lowers the ceiling", async () => {
    // Worst case of 4096 output tokens: $0.061 at tg/ordered's prices, $0.123 at tg/fallback's.
    const k = await seedKey(dp.cp.deps, { models: DEPLOYMENT_ALIASES, budgetUsd: 0.1 });
    expect((await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/ordered' }))).status).to.equal(200);
    const lowered = await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/with-fallback' }));
    expect(lowered.status, lowered.text).to.equal(200);
    // Sized at the fallback's prices, the ceiling is lowered (docs/proxy.md, "When the money does not cover the worst case").
    expect(Number(lowered.headers.get('x-tollgate-output-limit'))).to.be.within(1, 4095);
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 2, b: 0, c: 0 });
  });

  for (const format of FORMATS) {
    for (const stream of [false, true]) {
      for (const f of FAILURES) {
        if (f.streamOnly && !stream) continue;
        it(`${format}${stream ? ' streamed' : ''}: ${f.name} → the next deployment answers once, billed as a direct call`, async () => {
          const direct = await billOf(format, 'tg/single', stream);
          resetFakes(dp.fakes);
          const failed = await billOf(format, f.alias ?? 'tg/ordered', stream, () => {
            if (f.behavior) dp.fakes.a.enqueue(f.behavior);
          });
          expectClean(format, stream, failed.answer);
          expect(failed.answer.headers.get('x-tollgate-deployment')).to.equal(f.alias ? 'a/m-a' : 'b/m-b');
          expect(servedBy(dp.fakes)).to.deep.equal(f.alias ? { a: 1, b: 0, c: 0 } : { a: 1, b: 1, c: 0 });
          expect(failed.spend).to.be.greaterThan(0);
          expect(failed.spend).to.equal(direct.spend);
        });
      }
    }
  }

  for (const format of FORMATS) {
    it(`${format}: a 400 goes to the client at once, never to another deployment`, async () => {
      const k = await seed();
      dp.fakes.a.enqueue({ kind: 'error', status: 400 });
      const a = await edgeCall(proxy().url, format, k.slug, k.secret, modelBody(format, { model: 'tg/ordered' }));
      expect(a.status).to.equal(400);
      expect(servedBy(dp.fakes)).to.deep.equal({ a: 1, b: 0, c: 0 });
    });

    it(`${format}: a stream broken after its first byte is never replayed, and is billed for what it used`, async () => {
      const k = await seed();
      dp.fakes.a.enqueue({ kind: 'reset', afterEvents: 2 });
      const a = await edgeCall(proxy().url, format, k.slug, k.secret, modelBody(format, { model: 'tg/ordered', stream: true })).catch(
        (err: Error) => err,
      );
      // The client sees a broken or error-ended stream, never a second answer.
      if (!(a instanceof Error)) expect(a.text.split(STREAM_START[format]).length - 1).to.be.at.most(1);
      await proxy().drain();
      expect(servedBy(dp.fakes)).to.deep.equal({ a: 1, b: 0, c: 0 });
      expect((await moneyOf(dp.cp.deps, k)).spend).to.be.greaterThan(0);
    });
  }

  it('every deployment down → the fallback alias answers, translated to its provider, billed at its prices; a forbidden fallback is skipped', async () => {
    const direct = await billOf('chat', 'tg/fallback', false);
    resetFakes(dp.fakes);
    const k = await seed();
    dp.fakes.a.enqueue({ kind: 'error', status: 503 });
    dp.fakes.b.enqueue({ kind: 'error', status: 529 });
    const a = await edgeCall(proxy().url, 'chat', k.slug, k.secret, modelBody('chat', { model: 'tg/with-fallback' }));
    expectClean('chat', false, a);
    expect((a.body as { object: string }).object).to.equal('chat.completion');
    expect(a.headers.get('x-tollgate-model')).to.equal('tg/fallback');
    expect(a.headers.get('x-tollgate-deployment')).to.equal('c-messages/m-fallback');
    expect(servedBy(dp.fakes)).to.deep.equal({ a: 1, b: 1, c: 1 });
    expect(dp.fakes.c.requests[0]!.path).to.equal('/anthropic/v1/messages');
    await proxy().drain();
    expect((await moneyOf(dp.cp.deps, k)).spend).to.equal(direct.spend);
    // The ledger says who served: the fallback alias billed, its deployment; usage groups by it.
    const rows = await dp.cp.deps.db.query<{ model: string; deployment: string }>(
      `SELECT model, deployment FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
      [k.keyId],
    );
    expect(rows).to.deep.equal([{ model: 'tg/fallback', deployment: 'c-messages/m-fallback' }]);
    const day = 24 * 3600_000;
    const groups = await usage_aggregate(
      dp.cp.deps.db,
      { workspace_id: k.workspaceId, from: new Date(Date.now() - day), to: new Date(Date.now() + day) },
      'day',
      'deployment',
    );
    expect(groups.map((g) => [g.group_id, g.requests])).to.deep.equal([['c-messages/m-fallback', 1]]);
  });
});
