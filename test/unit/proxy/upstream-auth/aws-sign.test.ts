import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { signAwsRequest, type SignableRequest } from '../../../../proxy/upstream-auth/aws-sign.js';
import { createAwsSigV4Authorizer, createBedrockApiKeyAuthorizer } from '../../../../proxy/upstream-auth/aws.js';
import { checkSigV4, isRefusal, type FakeAwsIdentity } from '../../../support/fake-bedrock/sigv4-check.js';

const VECTORS = new URL('../../../fixtures/sigv4/', import.meta.url);

interface VectorContext {
  credentials: { access_key_id: string; secret_access_key: string; token?: string };
  region: string;
  service: string;
  sign_body: boolean;
  timestamp: string;
}

/** The suite's `request.txt`: a request line, `Name:value` headers (a line starting with space continues the last), a blank line, the body. */
function parseRequest(text: string): SignableRequest {
  const [head, ...rest] = text.split('\n\n');
  const lines = head!.split('\n');
  const [method, target] = lines[0]!.split(' ');
  const headers: Record<string, string> = {};
  let last = '';
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    if (/^\s/.test(line)) {
      headers[last] += `,${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    last = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[last] = headers[last] === undefined ? value : `${headers[last]},${value}`;
  }
  const host = headers.host!;
  delete headers.host;
  const q = target!.indexOf('?');
  const query: Record<string, string> = {};
  if (q !== -1) for (const [k, v] of new URLSearchParams(target!.slice(q + 1))) query[k] = v;
  return { method: method!, host, path: q === -1 ? target! : target!.slice(0, q), query, headers, body: rest.join('\n\n') };
}

function signatureOf(authorization: string): string {
  return /Signature=([0-9a-f]{64})$/.exec(authorization)![1]!;
}

describe('AWS SigV4 signing (the proxy signer)', () => {
  const names = readdirSync(VECTORS).filter((n) => !n.endsWith('.md'));

  it('has the vectors checked in', () => {
    expect(names.length).to.be.at.least(8);
  });

  for (const name of names) {
    it(`produces the AWS test suite's signature for ${name}`, async () => {
      const context = JSON.parse(readFileSync(new URL(`${name}/context.json`, VECTORS), 'utf8')) as VectorContext;
      const request = parseRequest(readFileSync(new URL(`${name}/request.txt`, VECTORS), 'utf8'));
      const expected = readFileSync(new URL(`${name}/header-signature.txt`, VECTORS), 'utf8').trim();
      const c = context.credentials;
      const headers = await signAwsRequest(
        request,
        { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key, sessionToken: c.token },
        { region: context.region, service: context.service, at: new Date(context.timestamp), signBody: context.sign_body },
      );
      expect(signatureOf(headers.authorization!)).to.equal(expected);
      if (c.token) expect(headers['x-amz-security-token']).to.equal(c.token);
    });
  }
});

describe('Bedrock request authorization', () => {
  const identity: FakeAwsIdentity = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret/KEY+test', sessionToken: 'session-token' };
  const at = Date.UTC(2026, 10, 28, 12, 0, 0);
  const body = Buffer.from('{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[]}');
  const request = {
    method: 'POST',
    origin: 'https://bedrock-runtime.eu-west-1.amazonaws.com',
    path: '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body,
  };
  let clock = at;
  const authorizer = createAwsSigV4Authorizer({ region: 'eu-west-1', credentials: { get: () => Promise.resolve(identity) }, nowMs: () => clock });

  function check(headers: Record<string, string>, reqBody = body, path = request.path) {
    return checkSigV4(
      { method: 'POST', url: path, headers: { ...request.headers, host: 'bedrock-runtime.eu-west-1.amazonaws.com', ...headers }, body: reqBody },
      (id) => (id === identity.accessKeyId ? identity : undefined),
      { region: 'eu-west-1', service: 'bedrock', nowMs: at },
    );
  }

  it('signs for the bedrock service, with the session token and the body hash, in a way aws4 accepts', async () => {
    clock = at;
    const headers = await authorizer.headers(request);
    expect(headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/20261128\/eu-west-1\/bedrock\/aws4_request, /);
    expect(headers['x-amz-security-token']).to.equal('session-token');
    expect(headers['x-amz-content-sha256']).to.have.length(64);
    expect(headers).not.to.have.property('host');
    expect(check(headers)).to.equal(identity);
  });

  it('signs every attempt anew, at the time of the attempt', async () => {
    clock = at;
    const first = await authorizer.headers(request);
    clock = at + 2000;
    const second = await authorizer.headers(request);
    expect(second['x-amz-date']).to.equal('20261128T120002Z');
    expect(second.authorization).not.to.equal(first.authorization);
  });

  it('is refused by the checker when the body or the path differs from what was signed', async () => {
    clock = at;
    const headers = await authorizer.headers(request);
    const tampered = check(headers, Buffer.from(body.toString().replace('5', '6')));
    expect(isRefusal(tampered) && tampered.type).to.equal('InvalidSignatureException');
    const otherModel = check(headers, body, '/model/anthropic.claude-opus-4-1-20250805-v1%3A0/invoke');
    expect(isRefusal(otherModel) && otherModel.type).to.equal('InvalidSignatureException');
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    const headers = await createBedrockApiKeyAuthorizer('ABSKexample').headers(request);
    expect(headers).to.deep.equal({ authorization: 'Bearer ABSKexample' });
  });
});
