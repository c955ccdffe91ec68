import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { moneyOf, seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import { PROVIDER_KINDS } from './kinds.js';
import { runCodexExec } from './codex.js';

/** The proxy's count of WebSocket frames that were calls (its metrics), to tell the socket was used and not the HTTP fallback. */
async function socketCalls(dp: DataPlane): Promise<number> {
  const metric = await dp.proxy.metrics!.getSingleMetric('tollgate_proxy_websocket_frames_total')!.get();
  return metric.values.find((v) => v.labels.kind === 'call')?.value ?? 0;
}

/**
 * `codex exec` with `supports_websockets = true`, unchanged: it opens
 * `/{ws}/v1/responses` as a WebSocket, prewarms it, and sends every turn of
 * the session as a frame on that one socket. A tool round trip (the model
 * asks for `exec_command`, Codex runs it and sends the output back after
 * `previous_response_id`) on each provider kind; every call billed on the key.
 */
describeEachStore('Codex over its Responses WebSocket, on every provider kind', (store) => {
  let dp: DataPlane;
  let k: SeededKey;
  let base: string;
  before(async () => {
    dp = await startDataPlane(store);
    k = await seedKey(dp.cp.deps, { models: PROVIDER_KINDS.map((p) => p.model) });
    base = `${dp.proxy.url}/${k.slug}/v1`;
  });
  beforeEach(() => dp.fake.reset());
  after(() => dp.close());

  for (const [i, { kind, model, path }] of PROVIDER_KINDS.entries()) {
    if (store.name !== 'pglite' && i !== 1) continue;
    it(`${kind}: a tool round trip over the socket, each call billed`, async function () {
      this.timeout(120_000);
      await dp.proxy.drain();
      const before = await moneyOf(dp.cp.deps, k);
      const calls = await socketCalls(dp);
      dp.fake.enqueue(
        { kind: 'ok', outputTokens: 5, tools: [{ name: 'exec_command', input: { cmd: "printf 'socket-%s' tool-ran" } }] },
        { kind: 'ok', outputTokens: 3, textOnly: true },
      );
      const out = await runCodexExec(base, k.secret, model, 'run printf, then say hi', { webSocket: true });
      expect(out.exit, out.stderr).to.equal(0);
      expect(out.stdout).to.include('tok1 tok2 tok3');
      expect(dp.fake.requests).to.have.length(2);
      expect(dp.fake.requests.every((r) => r.path === path)).to.equal(true);
      // The second turn came as only the tool's output after previous_response_id; the provider got the whole conversation.
      const second = JSON.stringify(dp.fake.requests[1]!.body);
      expect(second).to.include('run printf, then say hi').and.include('exec_command').and.include('socket-tool-ran');
      expect((await socketCalls(dp)) - calls).to.equal(2);
      await dp.proxy.drain();
      const after = await moneyOf(dp.cp.deps, k);
      expect(after.entries - before.entries).to.equal(2);
      expect(after.spend).to.be.greaterThan(before.spend);
    });
  }
});
