import { expect } from 'chai';
import { createServer } from 'node:net';
import { describeEachStore } from '../../support/stores.js';
import {
  moneyOf,
  revokeKey,
  seedAnotherKey,
  seedKey,
  startDataPlane,
  startTestProxy,
  UPSTREAM_SECRET,
  type DataPlane,
} from '../../support/data-plane.js';
import {
  answerText,
  edgeCall,
  ERROR_TYPES,
  errorCodeOf,
  errorType,
  FORMATS,
  keyHeaders,
  listedModels,
  modelBody,
  modelsPath,
  otherKeyHeader,
  servedAs,
  VARIANTS,
  type EdgeAnswer,
} from '../../support/edge-calls.js';
import type { WireFormat } from '../../../proxy/call.js';
import { WIRE } from '../../../proxy/wire/registry.js';
import { generateSecret } from '../../../shared/secrets.js';

function expectOutcome(format: WireFormat, a: EdgeAnswer, status: keyof typeof ERROR_TYPES, code?: string): void {
  expect(a.status, a.text).to.equal(status);
  expect(a.headers.get('content-type')).to.include('application/json');
  expect(a.headers.get('x-request-id')).to.match(/^req_/);
  expect(errorType(format, a), a.text).to.equal(ERROR_TYPES[status][format]);
  // Only OpenAI's error shape carries a code string; Anthropic's has none and Google's `code` is the HTTP status.
  const codeOf = errorCodeOf(format);
  if (codeOf && code) expect(codeOf(a)).to.equal(code);
}

/**
 * A provider's own error on tg/sonnet, and what the client gets of it: the
 * same bytes when the provider speaks the client's format or shares its
 * error shape (Responses on a Chat provider), else the client's shape with
 * the provider's message (Gemini's, status 529 being no google.rpc code).
 */
const PROVIDER_ERROR: Record<WireFormat, { sent: unknown; seen: unknown }> = {
  chat: { sent: openAiOverloaded(), seen: openAiOverloaded() },
  messages: {
    sent: { type: 'error', error: { type: 'overloaded_error', message: 'overloaded upstream' } },
    seen: { type: 'error', error: { type: 'overloaded_error', message: 'overloaded upstream' } },
  },
  responses: { sent: openAiOverloaded(), seen: openAiOverloaded() },
  gemini: { sent: openAiOverloaded(), seen: { error: { code: 529, message: 'overloaded upstream', status: 'INTERNAL' } } },
};

function openAiOverloaded() {
  return { error: { message: 'overloaded upstream', type: 'server_error', param: null, code: null } };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describeEachStore('proxy: every outcome, identical on every format', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store, { env: { PROXY_MAX_BODY_BYTES: '4096', PROXY_UPSTREAM_HEADERS_TIMEOUT_MS: '1500' } });
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const { format, stream, name } of VARIANTS) {
    // Enforcement answers before anything streams: a streamed call is refused in the same JSON as an unstreamed one.
    const bodyOf = (extra: Record<string, unknown> = {}) => modelBody(format, { ...(stream ? { stream: true } : {}), ...extra });
    describe(name, () => {
      it('200 with the upstream answer; the provider key, not the client key, reaches the provider', async () => {
        const k = await seedKey(dp.cp.deps);
        const a = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf());
        expect(a.status, a.text).to.equal(200);
        expect(a.headers.get('x-request-id')).to.match(/^req_/);
        expect(answerText(format, a)).to.match(/^tok1/);
        const seen = dp.fake.requests.at(-1)!;
        const provider = WIRE[servedAs(format)].provider;
        expect(seen.credential).to.deep.equal({ header: provider.authHeader, key: UPSTREAM_SECRET });
        expect(JSON.stringify(seen.headers)).not.to.include(k.secret);
        expect((seen.body as { model: string }).model).to.equal('claude-sonnet-4-5');
        // What a provider of that format needs on every call (Anthropic's version), whatever the client sent.
        for (const [name, value] of Object.entries(WIRE[servedAs(format)].requiredProviderHeaders)) expect(seen.headers[name]).to.equal(value);
      });

      it('200 with the key in the other header the format accepts', async () => {
        const k = await seedKey(dp.cp.deps);
        const a = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf(), { keyHeader: otherKeyHeader(format) });
        expect(a.status, a.text).to.equal(200);
      });

      it('401 for a missing, malformed, unknown, revoked or expired key and for a key of another workspace', async () => {
        const k = await seedKey(dp.cp.deps);
        const other = await seedKey(dp.cp.deps);
        const expired = await seedAnotherKey(dp.cp.deps, k, { expiresAt: new Date(Date.now() - 1000) });
        const revoked = await seedAnotherKey(dp.cp.deps, k);
        await revokeKey(dp.cp.deps, revoked.keyId);
        const unknown = generateSecret('apiKey');
        const malformed = `${k.secret.slice(0, -1)}${k.secret.endsWith('A') ? 'B' : 'A'}`;
        for (const key of [undefined, 'sk-not-ours', malformed, unknown, revoked.secret, expired.secret, other.secret]) {
          const a = await edgeCall(dp.proxy.url, format, k.slug, key, bodyOf());
          expectOutcome(format, a, 401, 'invalid_api_key');
          // Another workspace's live key is told the key does not fit this workspace; every other bad key gets one answer.
          expect(a.body.error.message).to.equal(
            key === other.secret ? 'Invalid API key for this workspace: check the workspace slug in the base URL.' : 'Invalid API key.',
          );
        }
        // The answer at a slug that exists and at one that does not is the same: no slug is revealed.
        const nowhere = await edgeCall(dp.proxy.url, format, 'no-such-workspace', other.secret, bodyOf());
        expect(nowhere.body).to.deep.equal((await edgeCall(dp.proxy.url, format, k.slug, other.secret, bodyOf())).body);
        expectOutcome(format, nowhere, 401, 'invalid_api_key');
        expect(dp.fake.requests).to.have.length(0);
      });

      it('400 for a body that is not JSON or lacks model or messages', async () => {
        const k = await seedKey(dp.cp.deps);
        const withoutInput = bodyOf({ messages: undefined });
        for (const body of ['{not json', JSON.stringify({ messages: [] }), JSON.stringify(withoutInput), '[]']) {
          expectOutcome(format, await edgeCall(dp.proxy.url, format, k.slug, k.secret, body), 400);
        }
        expect(dp.fake.requests).to.have.length(0);
      });

      it('404 for an unknown model alias', async () => {
        const k = await seedKey(dp.cp.deps);
        expectOutcome(format, await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf({ model: 'tg/nope' })), 404, 'model_not_found');
      });

      it("403 for a model that is not on the key's team list", async () => {
        const k = await seedKey(dp.cp.deps, { models: ['tg/haiku'] });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf()), 403);
      });

      it('402 when the workspace balance is not positive, and when the key budget is used up', async () => {
        const broke = await seedKey(dp.cp.deps, { balanceUsd: 0 });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, broke.slug, broke.secret, bodyOf()), 402, 'insufficient_quota');
        const spent = await seedKey(dp.cp.deps, { budgetUsd: 0 });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, spent.slug, spent.secret, bodyOf()), 402, 'insufficient_quota');
        // A budget too small for the worst case of this call is refused before forwarding, too.
        const small = await seedKey(dp.cp.deps, { budgetUsd: 0.0001 });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, small.slug, small.secret, bodyOf({ max_tokens: 1000 })), 402);
        expect(dp.fake.requests).to.have.length(0);
      });

      it('429 with retry-after and x-ratelimit-* once the requests per minute are used', async () => {
        const k = await seedKey(dp.cp.deps, { rpm: 2 });
        const ok = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf());
        expect(ok.status).to.equal(200);
        expect(ok.headers.get('x-ratelimit-limit-requests')).to.equal('2');
        expect(ok.headers.get('x-ratelimit-remaining-requests')).to.equal('1');
        expect(ok.headers.get('x-ratelimit-reset-requests')).to.match(/^\d+s$/);
        expect((await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf())).status).to.equal(200);
        const limited = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf());
        expectOutcome(format, limited, 429);
        expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
        expect(limited.headers.get('x-ratelimit-remaining-requests')).to.equal('0');
      });

      it('429 once the tokens per minute are used, with the -tokens headers', async () => {
        const k = await seedKey(dp.cp.deps, { tpm: 40 });
        const first = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf({ max_tokens: 5 }));
        expect(first.status, first.text).to.equal(200);
        expect(first.headers.get('x-ratelimit-limit-tokens')).to.equal('40');
        await dp.proxy.drain();
        const limited = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf({ max_tokens: 5 }));
        expectOutcome(format, limited, 429);
        expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
      });

      it('413 for a body over the limit', async () => {
        const k = await seedKey(dp.cp.deps);
        const big = bodyOf({ messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, k.slug, k.secret, big), 413);
        expect(dp.fake.requests).to.have.length(0);
      });

      it("the upstream's own error answer passes through with its status and body, and is not billed", async () => {
        const k = await seedKey(dp.cp.deps);
        dp.fake.enqueue({ kind: 'error', status: 529, body: PROVIDER_ERROR[format].sent });
        const a = await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf());
        expect(a.status).to.equal(529);
        expect(a.body).to.deep.equal(PROVIDER_ERROR[format].seen);
        expect(a.headers.get('x-request-id')).to.match(/^req_/);
        await dp.proxy.drain();
        expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(0);
      });

      it('504 when the upstream sends no headers in time, and the upstream request is aborted', async () => {
        const k = await seedKey(dp.cp.deps);
        dp.fake.enqueue({ kind: 'stall', when: 'before-headers' });
        expectOutcome(format, await edgeCall(dp.proxy.url, format, k.slug, k.secret, bodyOf()), 504);
        await dp.fake.idle();
        expect(dp.fake.requests.at(-1)!.aborted).to.equal(true);
        await dp.proxy.drain();
        expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(0);
      });

      // A list is never streamed: the unstreamed Responses case covers the Responses clients' list.
      if (!stream)
        it('GET models lists the aliases this key may call, in the provider list shape', async () => {
          const k = await seedKey(dp.cp.deps, { models: ['tg/haiku', 'tg/sonnet'] });
          const path = modelsPath(format, k.slug);
          const res = await fetch(`${dp.proxy.url}${path}`, { headers: keyHeaders(format, k.secret) });
          expect(res.status).to.equal(200);
          expect(res.headers.get('x-request-id')).to.match(/^req_/);
          // The list in the format's own shape (listedModels reads no other).
          expect(listedModels(format, await res.json())).to.deep.equal(['tg/haiku', 'tg/sonnet']);
          const refused = await fetch(`${dp.proxy.url}${path}`, { headers: { authorization: 'Bearer nope' } });
          expect(refused.status).to.equal(401);
        });
    });
  }

  it('400 on Messages without max_tokens or without anthropic-version; Chat Completions needs neither', async () => {
    const k = await seedKey(dp.cp.deps);
    const noMax = modelBody('messages');
    delete noMax.max_tokens;
    expectOutcome('messages', await edgeCall(dp.proxy.url, 'messages', k.slug, k.secret, noMax), 400);
    expectOutcome(
      'messages',
      await edgeCall(dp.proxy.url, 'messages', k.slug, k.secret, modelBody('messages'), { headers: { 'anthropic-version': '' } }),
      400,
    );
    expect((await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(200);
  });

  it('one key, one minute window: requests on both formats count against the same rpm', async () => {
    const k = await seedKey(dp.cp.deps, { rpm: 2 });
    expect((await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(200);
    expect((await edgeCall(dp.proxy.url, 'messages', k.slug, k.secret, modelBody('messages'))).status).to.equal(200);
    expect((await edgeCall(dp.proxy.url, 'chat', k.slug, k.secret, modelBody('chat'))).status).to.equal(429);
    expect((await edgeCall(dp.proxy.url, 'messages', k.slug, k.secret, modelBody('messages'))).status).to.equal(429);
  });

  it('GET /healthz answers 200 with x-request-id', async () => {
    const res = await fetch(`${dp.proxy.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.match(/^req_/);
  });

  it('502 on every format when the provider cannot be reached; nothing is billed', async () => {
    const port = await closedPort();
    const dead = await startTestProxy(dp.cp, {
      chatCompletionsBaseUrl: `http://127.0.0.1:${port}/v1`,
      messagesBaseUrl: `http://127.0.0.1:${port}/anthropic`,
      geminiBaseUrl: `http://127.0.0.1:${port}`,
      responsesBaseUrl: `http://127.0.0.1:${port}/v1`,
    });
    try {
      const k = await seedKey(dp.cp.deps);
      for (const format of FORMATS) expectOutcome(format, await edgeCall(dead.url, format, k.slug, k.secret, modelBody(format)), 502);
      await dead.drain();
      expect((await moneyOf(dp.cp.deps, k)).entries).to.equal(0);
      // The holds were released: the whole balance is still there to hold.
      expect((await moneyOf(dp.cp.deps, k)).balance).to.equal(100);
    } finally {
      await dead.close();
    }
  });
});
