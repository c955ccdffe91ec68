import { expect } from 'chai';
import { downstreamHeaders, presentedKey, upstreamHeaders } from '../../../proxy/headers.js';

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
    const out = upstreamHeaders(
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
    );
    expect(out).to.deep.equal({
      'content-type': 'application/json',
      'content-length': '42',
      'accept-encoding': 'identity',
      'anthropic-version': '2023-06-01',
      'user-agent': 'sdk/1',
      'x-api-key': 'provider-key',
    });
    expect(upstreamHeaders({}, { header: 'authorization', secret: 'p' }, 1).authorization).to.equal('Bearer p');
  });

  it("sends an Azure-style api-key as the bare key, and a provider's extra headers never override it", () => {
    const out = upstreamHeaders({ 'api-key': 'client-key' }, { header: 'api-key', secret: 'provider-key' }, 1, { 'api-key': 'x', 'x-extra': 'y' });
    expect(out['api-key']).to.equal('provider-key');
    expect(out['x-extra']).to.equal('y');
    expect(out.authorization).to.equal(undefined);
  });

  it("relays the provider's headers minus hop-by-hop ones, those its Connection header names, and the operator's account details", () => {
    const out = downstreamHeaders(
      {
        'content-type': 'text/event-stream',
        'content-length': '10',
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
      },
      true,
    );
    expect(out).to.deep.equal({
      'content-type': 'text/event-stream',
      'x-upstream-request-id': 'upstream-id',
      'openai-processing-ms': '12',
    });
  });
});
