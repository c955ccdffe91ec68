import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGoogleToken } from '../../../../proxy/upstream-auth/google.js';
import { startFakeUpstream, type FakeUpstream } from '../../../support/fake-upstream/index.js';
import { startFakeGoogleToken, type FakeGoogleToken } from '../../../support/fake-clouds/google-token.js';
import { startFakeVertex, VERTEX_ANTHROPIC_VERSION, type FakeVertex } from '../../../support/fake-clouds/vertex.js';
import { capturedLog } from '../../../support/log-lines.js';

async function rawPredict(vertex: FakeVertex, token: string): Promise<number> {
  const res = await fetch(`${vertex.url}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('Vertex AI tokens from Application Default Credentials', () => {
  let dir: string;
  let google: FakeGoogleToken;
  let upstream: FakeUpstream;
  let vertex: FakeVertex;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-google-'));
    google = await startFakeGoogleToken();
    upstream = await startFakeUpstream({ formats: 'messages' });
    vertex = await startFakeVertex({ tokens: google.tokens, upstream });
  });
  afterEach(async () => {
    await Promise.all([google.close(), upstream.close(), vertex.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("mints a token from a service-account key file at the file's token_uri, which Vertex accepts", async () => {
    const env = { GOOGLE_APPLICATION_CREDENTIALS: google.writeKeyFile(dir) };
    const source = createGoogleToken({ provider: 'vertex', env, log: capturedLog().log });
    const token = await source.token();
    expect(google.tokens.check(token)).to.equal('ok');
    expect(google.refusals).to.deep.equal([]);
    expect(await rawPredict(vertex, token)).to.equal(200);
    expect(vertex.calls[0]).to.include({ project: 'p1', location: 'us-east5', model: 'claude-sonnet-4-5@20250929', method: 'rawPredict' });
  });

  it('refreshes a token before it expires, so calls across several lifetimes never meet a refusal', async function () {
    this.timeout(15_000);
    google.tokens.lifetimeSeconds = 2;
    const source = createGoogleToken({
      provider: 'vertex',
      env: { GOOGLE_APPLICATION_CREDENTIALS: google.writeKeyFile(dir) },
      log: capturedLog().log,
    });
    const statuses: number[] = [];
    const started = Date.now();
    while (Date.now() - started < 5_000) {
      statuses.push(await rawPredict(vertex, await source.token()));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(vertex.refusedTokens).to.deep.equal([]);
    expect(google.tokens.count).to.be.at.least(3, 'a token of 2 s serves 5 s of calls only if refreshed');
    expect(statuses.length).to.be.at.least(20);
  });

  it('names the key file that cannot be read, as a 503 for the provider', async () => {
    const source = createGoogleToken({
      provider: 'vertex-eu',
      env: { GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'missing.json') },
      log: capturedLog().log,
    });
    const err = (await source.token().catch((e: unknown) => e)) as { status: number; message: string };
    expect(err.status).to.equal(503);
    expect(err.message).to.equal(
      `Provider "vertex-eu" has no usable credentials: GOOGLE_APPLICATION_CREDENTIALS names ${join(dir, 'missing.json')}, which cannot be read.`,
    );
  });

  it('is refused by the token endpoint when another key signed the assertion, and says so without the key', async () => {
    const other = await startFakeGoogleToken();
    try {
      // The other server's key, with this server's token_uri and service account: a signature the endpoint must refuse.
      const path = other.writeKeyFile(dir);
      const key = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8')) as Record<string, string>;
      writeFileSync(path, JSON.stringify({ ...key, token_uri: google.tokenUri, client_email: google.clientEmail }));
      const captured = capturedLog();
      const source = createGoogleToken({ provider: 'vertex', env: { GOOGLE_APPLICATION_CREDENTIALS: path }, log: captured.log });
      const err = (await source.token().catch((e: unknown) => e)) as { status: number; message: string };
      expect(err.status).to.equal(503);
      expect(err.message).to.equal('Provider "vertex" has no usable credentials: the token request failed.');
      expect(google.refusals).to.include('bad signature');
      expect(captured.text()).to.include('invalid_grant');
      expect(captured.text()).not.to.include(key.private_key!.split('\n')[1]!);
    } finally {
      await other.close();
    }
  });
});
