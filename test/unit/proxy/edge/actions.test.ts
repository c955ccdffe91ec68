import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACTION_TABLE, row, stepsByAction } from '../../../../proxy/edge/actions.js';
import { createEdgeHandler } from '../../../../proxy/edge/index.js';
import { holdMoney } from '../../../../proxy/edge/steps/hold.js';
import { newCall, type EdgeCall } from '../../../../proxy/observe.js';
import type { LimitOutcome } from '../../../../proxy/rate-limits.js';
import type { Action } from '../../../../proxy/edge/steps/step.js';
import { fakeDeps, resolvedKey, type FakeAnswers } from './fakes.js';

const SAY = [{ role: 'user', content: 'hi' }];

/** One request of each action but embeddings, each refused before any provider is asked when its model is one the team may not use. */
const REQUESTS: { action: Action; method: string; path: string; body?: unknown }[] = [
  { action: 'call', method: 'POST', path: '/acme/v1/chat/completions', body: { model: 'tg/haiku', messages: SAY } },
  { action: 'count', method: 'POST', path: '/acme/anthropic/v1/messages/count_tokens', body: { model: 'tg/gpt-direct', messages: SAY } },
  { action: 'models', method: 'GET', path: '/acme/v1/models' },
  { action: 'model', method: 'GET', path: '/acme/v1/models/tg%2Fgpt-direct' },
];

/** The edge on a loopback server over the step fakes, with each request's record as the observer ends it. */
async function startEdge(answers: FakeAnswers) {
  const { deps, asked } = fakeDeps(answers);
  const ended: { call: EdgeCall; status: number }[] = [];
  const handler = createEdgeHandler({
    ...deps,
    observe: { ...deps.observe, begin: (req, id) => newCall(id, req), end: (call, status) => void ended.push({ call, status }) },
  });
  const server: Server = createServer(handler.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  async function send(r: (typeof REQUESTS)[number]) {
    const res = await fetch(`${url}${r.path}`, {
      method: r.method,
      headers: { authorization: 'Bearer tg-test-key', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: r.body === undefined ? undefined : JSON.stringify(r.body),
    });
    const body = (await res.json()) as { type?: string; error?: { type?: string } };
    await handler.idle();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body, record: ended.at(-1)! };
  }
  return { send, asked, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('edge actions: every action is run from one table of steps', () => {
  it("builds each action's steps so that every step reads only what an earlier step of that action wrote", () => {
    const steps = stepsByAction();
    const names = (a: Action) => steps[a].map(([name]) => name);
    expect(names('call')).to.deep.equal(['key', 'parse', 'model', 'access', 'responses', 'limits', 'hold', 'forward', 'meter', 'settle']);
    expect(names('embed')).to.deep.equal(['key', 'parse', 'model', 'access', 'limits', 'hold', 'forward', 'meter', 'settle']);
    expect(names('count')).to.deep.equal(['key', 'limits', 'parse', 'model', 'count']);
    expect(names('models')).to.deep.equal(['key', 'list']);
    expect(names('model')).to.deep.equal(['key', 'retrieve']);
  });

  it('refuses, when the edge is made, a table whose step reads what no step before it wrote', () => {
    const early = row('hold', 'planned', holdMoney, ['held'], ['call']);
    expect(() => stepsByAction([early, ...ACTION_TABLE])).to.throw(/Step hold of call reads key, call, model, provider, up/);
  });

  it('the key step admits the key alike for a call, a token count, the model list and one model: each record names key and workspace', async () => {
    const edge = await startEdge({ cached: { kind: 'known', key: resolvedKey() } });
    try {
      for (const r of REQUESTS) {
        const { status, record } = await edge.send(r);
        expect(status, r.action).to.equal(r.action === 'call' ? 403 : 200);
        expect(record.call, r.action).to.include({ route: r.action, keyId: 'k1', workspaceId: 'w1' });
      }
    } finally {
      await edge.close();
    }
  });

  it("refuses a revoked key with the key step's 401 on every action, in its format; only a call's refusal is counted as usage", async () => {
    const edge = await startEdge({ cached: { kind: 'known', key: resolvedKey({ revoked: true }) } });
    try {
      for (const r of REQUESTS) {
        const { status, body, record } = await edge.send(r);
        expect(status, r.action).to.equal(401);
        // The count is Anthropic's path, in its error shape; the others OpenAI's.
        expect(body.error?.type, r.action).to.equal(r.action === 'count' ? 'authentication_error' : 'invalid_request_error');
        expect(body.type, r.action).to.equal(r.action === 'count' ? 'error' : undefined);
        expect(record.call.error?.kind, r.action).to.equal('unauthenticated');
        expect(record.call, r.action).to.include({ route: r.action, keyId: undefined, workspaceId: undefined });
      }
      expect(edge.asked.refused.map((c) => c.reason)).to.deep.equal(['key']);
    } finally {
      await edge.close();
    }
  });

  it("limits a token count in its own window before its body is read, and the model list not at all (README's rule)", async () => {
    const limit: LimitOutcome = { ok: false, which: 'requests', retryAfterMs: 1500 };
    const edge = await startEdge({ cached: { kind: 'known', key: resolvedKey({ rpm: 5 }) }, limit });
    try {
      const count = await edge.send(REQUESTS[1]!);
      expect(count.status).to.equal(429);
      expect(count.retryAfter).to.equal('2');
      expect(count.record.call).to.include({ detail: 'count', keyId: 'k1' });
      expect(count.record.call.model, 'refused before the body was read').to.equal(undefined);
      expect(edge.asked.limits).to.deep.equal([{ keyId: 'k1:count', rpm: 5, tpm: null, tokens: 0 }]);
      expect((await edge.send(REQUESTS[2]!)).status).to.equal(200);
      expect((await edge.send(REQUESTS[3]!)).status).to.equal(200);
      expect(edge.asked.limits).to.have.length(1);
    } finally {
      await edge.close();
    }
  });
});
