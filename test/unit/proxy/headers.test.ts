import { expect } from 'chai';
import { downstreamHeaders, presentedKey, upstreamHeaders } from '../../../proxy/headers.js';

/** The flat name/value pairs as an object, each name once. */
function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) {
    expect(out, `header ${flat[i]} sent twice`).not.to.have.property(flat[i]!);
    out[flat[i]!] = flat[i + 1]!;
  }
  return out;
}

describe('proxy: header handling', () => {
  it('takes the key from the header each format prefers, falling back to the other', () => {
    const both = { authorization: 'Bearer from-bearer', 'x-api-key': 'from-x-api-key' };
    expect(presentedKey(both, 'authorization')).to.equal('from-bearer');
    expect(presentedKey(both, 'x-api-key')).to.equal('from-x-api-key');
    expect(presentedKey({ 'x-api-key': 'only' }, 'authorization')).to.equal('only');
    expect(presentedKey({ authorization: 'Bearer only' }, 'x-api-key')).to.equal('only');
    expect(presentedKey({ authorization: 'Basic abc' }, 'authorization')).to.equal(undefined);
  });

  it('sends the provider only an allowlist plus its own credential, never the client key or hop-by-hop headers', () => {
    const out = pairs(
      upstreamHeaders(
        {
          authorization: 'Bearer client-key',
          'x-api-key': 'client-key',
          connection: 'keep-alive, x-secret',
          'x-secret': 'hop',
          'transfer-encoding': 'chunked',
          cookie: 'a=b',
          'anthropic-version': '2023-06-01',
          'user-agent': 'sdk/1',
        },
        { header: 'x-api-key', secret: 'provider-key' },
        42,
      ),
    );
    expect(out).to.deep.equal({
      'content-type': 'application/json',
      'content-length': '42',
      'accept-encoding': 'identity',
      'anthropic-version': '2023-06-01',
      'user-agent': 'sdk/1',
      'x-api-key': 'provider-key',
    });
    expect(pairs(upstreamHeaders({}, { header: 'authorization', secret: 'p' }, 1)).authorization).to.equal('Bearer p');
  });

  it("passes another API's headers only to a provider of that API (Claude Code's anthropic-beta stays off a Chat provider)", () => {
    const client = {
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219',
      'openai-beta': 'assistants=v2',
      accept: 'application/json',
    };
    const toChat = pairs(upstreamHeaders(client, { header: 'authorization', secret: 'p' }, 1, undefined, 'chat'));
    expect(toChat).to.include({ 'openai-beta': 'assistants=v2', accept: 'application/json' });
    expect(toChat).to.not.have.any.keys('anthropic-beta', 'anthropic-version');
    const toMessages = pairs(upstreamHeaders(client, { header: 'x-api-key', secret: 'p' }, 1, undefined, 'messages'));
    expect(toMessages).to.include({ 'anthropic-beta': 'claude-code-20250219', 'anthropic-version': '2023-06-01' });
    expect(toMessages).to.not.have.property('openai-beta');
  });

  it("adds the operator's extra headers once, over the client's, never over the framing or the credential, the same on every call", () => {
    const extra = { 'anthropic-version': '2099-01-01', 'x-org': 'ops', 'content-length': '1', 'x-api-key': 'stolen' };
    for (const length of [7, 8]) {
      const out = pairs(
        upstreamHeaders({ 'anthropic-version': '2023-06-01', accept: 'text/event-stream' }, { header: 'x-api-key', secret: 'k' }, length, extra),
      );
      expect(out).to.deep.equal({
        'content-type': 'application/json',
        'accept-encoding': 'identity',
        'anthropic-version': '2099-01-01',
        'x-org': 'ops',
        'x-api-key': 'k',
        'content-length': String(length),
        accept: 'text/event-stream',
      });
    }
  });

  it('keeps each provider credential apart: the same secret under another header, or another secret with the same extra headers, is its own', () => {
    const extra = { 'x-org': 'ops' };
    const bearer = pairs(upstreamHeaders({}, { header: 'authorization', secret: 's1' }, 1, extra));
    const apiKey = pairs(upstreamHeaders({}, { header: 'x-api-key', secret: 's1' }, 1, extra));
    const other = pairs(upstreamHeaders({}, { header: 'authorization', secret: 's2' }, 1, extra));
    const bare = pairs(upstreamHeaders({}, { header: 'authorization', secret: 's1' }, 1));
    expect(bearer).to.include({ authorization: 'Bearer s1', 'x-org': 'ops' }).and.not.have.property('x-api-key');
    expect(apiKey).to.include({ 'x-api-key': 's1', 'x-org': 'ops' }).and.not.have.property('authorization');
    expect(other).to.include({ authorization: 'Bearer s2', 'x-org': 'ops' });
    expect(bare).to.include({ authorization: 'Bearer s1' }).and.not.have.property('x-org');
  });

  it("sends an Azure-style api-key as the bare key, and a provider's extra headers never override it", () => {
    const out = pairs(
      upstreamHeaders({ 'api-key': 'client-key' }, { header: 'api-key', secret: 'provider-key' }, 1, { 'api-key': 'x', 'x-extra': 'y' }),
    );
    expect(out['api-key']).to.equal('provider-key');
    expect(out['x-extra']).to.equal('y');
    expect(out.authorization).to.equal(undefined);
  });

  it("relays the provider's headers minus hop-by-hop ones, those its Connection header names, and the operator's account details", () => {
    const out = downstreamHeaders({
      'content-type': 'text/event-stream',
      connection: 'keep-alive, x-hop',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'x-hop': '1',
      'x-request-id': 'upstream-id',
      'anthropic-ratelimit-requests-limit': '50',
      'x-ratelimit-remaining-tokens': '999',
      'openai-organization': 'operator-org',
      'set-cookie': ['__cf_bm=x'],
      'openai-processing-ms': '12',
    });
    expect(out).to.deep.equal({
      'content-type': 'text/event-stream',
      'x-upstream-request-id': 'upstream-id',
      'openai-processing-ms': '12',
    });
  });

  it("relays only allowlisted provider headers: a self-hosted server's debug headers stay behind (security finding 13)", () => {
    const out = downstreamHeaders(
      {
        'content-type': 'application/json',
        'content-length': '42',
        'request-id': 'req_anthropic',
        'retry-after': '3',
        'retry-after-ms': '3000',
        'x-should-retry': 'true',
        'x-debug-backend': '10.0.0.7:8000',
        'x-internal-trace': 'gpu-node-3',
        server: 'vllm/0.6',
        via: '1.1 internal-gw',
        'anthropic-organization-id': 'operator-org',
      },
      { 'x-request-id': 'req_proxy' },
    );
    expect(out).to.deep.equal({
      'content-type': 'application/json',
      'content-length': '42',
      'request-id': 'req_anthropic',
      'retry-after': '3',
      'retry-after-ms': '3000',
      'x-should-retry': 'true',
      'x-request-id': 'req_proxy',
    });
  });
});
