import { expect } from 'chai';
import { pino } from 'pino';
import { createAwsCredentialSource, standardAwsChain } from '../../../proxy/upstream-auth/aws-credentials.js';
import { createAwsSigV4Authorizer, createBedrockApiKeyAuthorizer } from '../../../proxy/upstream-auth/aws.js';
import type { UpstreamAuthorizer } from '../../../proxy/upstream-auth/authorizer.js';
import type { AwsCredentials } from '../../../proxy/upstream-auth/aws-sign.js';
import { bedrockPath, type BedrockOperation } from '../../../proxy/wire/bedrock/endpoint.js';
import { createInvokeStreamDecoder } from '../../../proxy/wire/bedrock/invoke-stream.js';
import { MalformedEventStream } from '../../../proxy/wire/bedrock/event-stream.js';
import { startFakeBedrock, type FakeBedrock } from '../../support/fake-bedrock/index.js';

const MODEL = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const BODY = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 30, messages: [{ role: 'user', content: 'hello' }] };

/** One call the way the proxy makes it: the body, then the authorizer's headers for this attempt. */
async function call(fake: FakeBedrock, auth: UpstreamAuthorizer, body: unknown = BODY, operation: BedrockOperation = 'invoke') {
  const path = bedrockPath(MODEL, operation);
  const bytes = Buffer.from(JSON.stringify(body));
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const added = await auth.headers({ method: 'POST', origin: fake.url, path, headers, body: bytes });
  const res = await fetch(`${fake.url}${path}`, { method: 'POST', headers: { ...headers, ...added }, body: bytes });
  return { status: res.status, type: res.headers.get('x-amzn-errortype')?.split(':')[0], bytes: Buffer.from(await res.arrayBuffer()) };
}

function sigv4(identity: AwsCredentials, nowMs: () => number = Date.now, region = 'us-west-2'): UpstreamAuthorizer {
  return createAwsSigV4Authorizer({ region, credentials: { get: () => Promise.resolve(identity) }, nowMs });
}

describe('Bedrock fake: what it verifies of a signed call', () => {
  const longLived = { accessKeyId: 'AKIDLONG', secretAccessKey: 'long/lived+secret' };
  const expired = { accessKeyId: 'ASIAEXPIRED', secretAccessKey: 'expired-secret', sessionToken: 'expired-token', expiresAtMs: Date.now() - 1000 };
  let fake: FakeBedrock;

  before(async () => {
    fake = await startFakeBedrock({
      region: 'us-west-2',
      identities: [longLived, expired],
      apiKeys: ['ABSKgoodkey'],
      acceptedBetas: ['context-1m-2025-08-07'],
    });
  });
  after(() => fake.close());

  it("accepts the proxy signer's signature and answers with the Messages answer", async () => {
    const res = await call(fake, sigv4(longLived));
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.bytes.toString())).to.include({ type: 'message', role: 'assistant' });
    expect(fake.requests.at(-1)!.caller).to.equal('AKIDLONG');
  });

  it('refuses an access key it does not know: 403 UnrecognizedClientException', async () => {
    const res = await call(fake, sigv4({ accessKeyId: 'AKIDNOBODY', secretAccessKey: 'x' }));
    expect([res.status, res.type]).to.deep.equal([403, 'UnrecognizedClientException']);
  });

  it('refuses the wrong secret: 403 InvalidSignatureException', async () => {
    const res = await call(fake, sigv4({ ...longLived, secretAccessKey: 'wrong' }));
    expect([res.status, res.type]).to.deep.equal([403, 'InvalidSignatureException']);
  });

  it('refuses an expired session token: 403 ExpiredTokenException', async () => {
    const res = await call(fake, sigv4(expired));
    expect([res.status, res.type]).to.deep.equal([403, 'ExpiredTokenException']);
    expect(JSON.parse(res.bytes.toString())).to.deep.equal({ message: 'The security token included in the request is expired' });
  });

  it('refuses a signature made on a clock more than five minutes off, in AWS words', async () => {
    const behind = await call(
      fake,
      sigv4(longLived, () => Date.now() - 6 * 60_000),
    );
    expect([behind.status, behind.type]).to.deep.equal([403, 'InvalidSignatureException']);
    expect((JSON.parse(behind.bytes.toString()) as { message: string }).message).to.match(
      /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$/,
    );
    const ahead = await call(
      fake,
      sigv4(longLived, () => Date.now() + 6 * 60_000),
    );
    expect((JSON.parse(ahead.bytes.toString()) as { message: string }).message).to.match(/^Signature not yet current: /);
  });

  it('refuses a signature scoped to another region', async () => {
    const res = await call(fake, sigv4(longLived, Date.now, 'eu-west-1'));
    expect([res.status, res.type]).to.deep.equal([403, 'InvalidSignatureException']);
  });

  it('refuses a call with no credentials at all: 403 MissingAuthenticationTokenException', async () => {
    const res = await call(fake, { headers: () => Promise.resolve({}) });
    expect([res.status, res.type]).to.deep.equal([403, 'MissingAuthenticationTokenException']);
  });

  it('takes a Bedrock API key as a bearer token, and refuses an unknown one', async () => {
    expect((await call(fake, createBedrockApiKeyAuthorizer('ABSKgoodkey'))).status).to.equal(200);
    expect(fake.requests.at(-1)!.caller).to.equal('api-key');
    const res = await call(fake, createBedrockApiKeyAuthorizer('ABSKbadkey'));
    expect([res.status, res.type]).to.deep.equal([403, 'UnrecognizedClientException']);
  });

  it('refuses InvokeModel bodies Bedrock refuses: no version, a beta it does not take', async () => {
    const { anthropic_version: _v, ...noVersion } = BODY;
    const res = await call(fake, sigv4(longLived), noVersion);
    expect([res.status, res.type]).to.deep.equal([400, 'ValidationException']);
    const beta = await call(fake, sigv4(longLived), { ...BODY, anthropic_beta: ['interleaved-thinking-2025-05-14'] });
    expect([beta.status, beta.type]).to.deep.equal([400, 'ValidationException']);
    expect((await call(fake, sigv4(longLived), { ...BODY, anthropic_beta: ['context-1m-2025-08-07'] })).status).to.equal(200);
  });

  it('streams an exception message, or a broken one, as scripted', async () => {
    fake.enqueue({ kind: 'exception', afterEvents: 2, exception: 'throttlingException', message: 'slow down' }, { kind: 'corrupt', afterEvents: 2 });
    const thrown = await call(fake, sigv4(longLived), BODY, 'invoke-with-response-stream');
    expect(createInvokeStreamDecoder().push(thrown.bytes)).to.match(
      /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"slow down"\}\}\n\n$/,
    );
    const broken = await call(fake, sigv4(longLived), BODY, 'invoke-with-response-stream');
    expect(() => createInvokeStreamDecoder().push(broken.bytes)).to.throw(MalformedEventStream);
  });
});

describe('Bedrock credentials from the standard chain, expiring mid-test', () => {
  const saved = { ...process.env };
  let fake: FakeBedrock;

  before(async () => {
    // Session credentials from a container-credentials endpoint (the fake's) that live 2 s: refused by the fake once expired.
    fake = await startFakeBedrock({ region: 'us-east-1', credentialLifetimeMs: 2000 });
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
      'AWS_WEB_IDENTITY_TOKEN_FILE',
      'AWS_ROLE_ARN',
    ])
      delete process.env[name];
    Object.assign(process.env, {
      AWS_CONTAINER_CREDENTIALS_FULL_URI: fake.credentialsUrl,
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
      AWS_CONFIG_FILE: '/nonexistent/config',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
  });
  after(async () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await fake.close();
  });

  it('renews them before they expire: every call of a run longer than their life succeeds', async function () {
    this.timeout(15_000);
    const log = pino({ level: 'silent' });
    // The production margin is five minutes; one second here, so the run crosses several expiries.
    const credentials = createAwsCredentialSource({ provider: 'aws', load: standardAwsChain(), nowMs: Date.now, log, refreshMarginMs: 1000 });
    const auth = createAwsSigV4Authorizer({ region: 'us-east-1', credentials, nowMs: Date.now });
    const statuses: number[] = [];
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      statuses.push((await call(fake, auth)).status);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(fake.minted.length).to.be.at.least(3);
    expect(new Set(fake.requests.map((r) => r.caller)).size).to.be.at.least(3);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(fake.refusals).to.deep.equal([]);
  });
});
