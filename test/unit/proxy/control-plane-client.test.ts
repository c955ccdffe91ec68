import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ControlPlaneUnavailable, createControlPlaneClient } from '../../../proxy/control-plane-client.js';
import { resolvedKey } from '../../support/keys.js';

/** A stand-in control plane on loopback that answers every request with `body`. */
async function answering(body: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const HASH = 'a'.repeat(64);
const KEY = resolvedKey({ workspace_slug: 's', models: ['tg/x'], key_version: 1, balance_micros: 5 });

describe('proxy: control-plane client checks answers against the wire contract', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  async function clientAnswering(body: unknown) {
    const { server, url } = await answering(typeof body === 'string' ? body : JSON.stringify(body));
    servers.push(server);
    return createControlPlaneClient(url, 'token');
  }

  it('returns a key resolution that matches the contract', async () => {
    const client = await clientAnswering({ key: KEY, version: 3 });
    expect(await client.resolveKey(HASH)).to.deep.equal({ key: KEY, version: 3 });
    await client.close();
  });

  it('treats a key resolution missing a field as the control plane being unavailable', async () => {
    const { balance_micros: _dropped, ...partial } = KEY;
    const client = await clientAnswering({ key: partial, version: 3 });
    const err = await client.resolveKey(HASH).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ControlPlaneUnavailable);
    expect((err as Error).message).to.include('key.balance_micros');
    await client.close();
  });

  it('treats an answer that is not JSON as the control plane being unavailable', async () => {
    const client = await clientAnswering('<html>gateway timeout</html>');
    expect(await client.version().catch((e: unknown) => e)).to.be.instanceOf(ControlPlaneUnavailable);
    await client.close();
  });

  it('refuses a change page with an unknown topic', async () => {
    const client = await clientAnswering({ events: [{ id: 1, topic: 'galaxy', subject_id: 'x' }] });
    expect(await client.changesAfter(0).catch((e: unknown) => e)).to.be.instanceOf(ControlPlaneUnavailable);
    await client.close();
  });

  it('refuses usage results whose money is not integer micro-dollars', async () => {
    const result = {
      request_id: 'r',
      recorded: true,
      workspace_id: 'w',
      balance_micros: '12',
      balance_version: 1,
      key_remaining_micros: null,
      key_version: 1,
    };
    const client = await clientAnswering({ results: [result] });
    const report = {
      request_id: 'r',
      key_id: '00000000-0000-4000-8000-000000000000',
      model: 'tg/x',
      input_tokens: 1,
      output_tokens: 1,
      cost_micros: 1,
    };
    const sent = [{ json: JSON.stringify(report), requestId: report.request_id, keyId: report.key_id }];
    expect(await client.reportUsage(sent).catch((e: unknown) => e)).to.be.instanceOf(ControlPlaneUnavailable);
    await client.close();
  });
});

describe('proxy: control-plane client sends usage reports as they were serialized, and reads either answer', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));
  const KEY_A = '00000000-0000-4000-8000-00000000000a';
  const KEY_B = '00000000-0000-4000-8000-00000000000b';
  const money = (workspace_id: string | null, balance_micros: number) => ({
    workspace_id,
    balance_micros,
    balance_version: 2,
    key_remaining_micros: null,
    key_version: 1,
  });
  const texts = (...keys: string[]) =>
    keys.map((keyId, i) => ({
      // A model name beyond ASCII: the body is sized in UTF-8 bytes, not characters.
      json: JSON.stringify({ request_id: `r${i}`, key_id: keyId, model: 'tg/modèle-☃', input_tokens: 1, output_tokens: 1, cost_micros: 1 }),
      requestId: `r${i}`,
      keyId,
    }));

  /** A control plane that keeps what it was sent and answers `answer`. */
  async function controlPlane(answer: unknown) {
    const seen: { url: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url!, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return { seen, client: createControlPlaneClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'token') };
  }

  it("posts the reports' own text as the batch, asks for the answer per key, and returns it", async () => {
    const keys = [{ key_id: KEY_A, ...money('ws', 7) }];
    const { seen, client } = await controlPlane({ keys });
    const sent = texts(KEY_A, KEY_A);
    expect(await client.reportUsage(sent)).to.deep.equal(keys);
    expect(seen[0]!.url).to.equal('/internal/usage?answer=keys');
    expect(seen[0]!.body).to.equal(`{"reports":[${sent[0]!.json},${sent[1]!.json}]}`);
    expect(JSON.parse(seen[0]!.body)).to.deep.equal({ reports: sent.map((t) => JSON.parse(t.json) as unknown) });
    await client.close();
  });

  it('reads a control plane that answers per report (older, mid rolling upgrade): each known key once, by position', async () => {
    const results = [
      { request_id: 'r0', recorded: true, ...money('ws', 5) },
      { request_id: 'r1', recorded: false, ...money(null, 0) },
      { request_id: 'r2', recorded: true, ...money('ws', 5) },
    ];
    const { client } = await controlPlane({ results });
    expect(await client.reportUsage(texts(KEY_A, KEY_B, KEY_A))).to.deep.equal([{ key_id: KEY_A, ...money('ws', 5) }]);
    await client.close();
  });
});
