import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { seedKey, startDataPlane, type DataPlane, type SeededKey } from '../../support/data-plane.js';
import type { Behavior } from '../../support/fake-upstream/types.js';
import { COMPACTION_PROMPT, SUMMARY_INTRO } from '../../../proxy/wire/responses/compaction.js';
import { PROVIDER_KINDS } from './kinds.js';
import { MCP_ECHO, runCodexExec } from './codex.js';

/**
 * A real Codex 0.171, unchanged, through a session long enough to compact,
 * calling each kind of tool it offers, on each provider kind:
 * - with the built-in OpenAI provider (`openai_base_url`) Codex asks the
 *   provider to compact (a `compaction_trigger` item): passed through to a
 *   Responses provider, performed by the proxy elsewhere; its shell
 *   (`exec_command`), an MCP server's tool (a namespace tool) and its goal
 *   tool (whose later `function_call_output` has no `call_id`);
 * - with a custom provider and `model_catalog_url` (the README's recipe)
 *   Codex knows the alias from Tollgate's catalog (no "model metadata not
 *   found"), offers `apply_patch` as a free-form tool, and compacts with a
 *   call of its own.
 * The fake provider's answers are scripted so Codex calls the tools in
 * order; one answer reports more input tokens than the compaction limit.
 * Every call is billed, the compaction as its own operation; none is refused.
 */

const SMALL_WINDOW = [
  'model_context_window = 8000',
  'model_auto_compact_token_limit = 6000',
  'approval_policy = "never"',
  'sandbox_mode = "danger-full-access"',
];
const QUIET = { kind: 'ok', textOnly: true, outputTokens: 3, inputTokens: 1000 } as const;
const PATCH = '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+hello, patched\n*** End Patch\n';

type Json = Record<string, unknown>;

/** A scripted turn: these tool calls, reporting `inputTokens`. */
const calling = (tools: { name: string; input: Json; namespace?: string }[], inputTokens = 1000): Behavior => ({
  kind: 'ok',
  tools,
  inputTokens,
  outputTokens: 3,
});

function text(value: unknown): string {
  return JSON.stringify(value);
}

describeEachStore('Codex 0.171 for a whole session: compaction, every tool kind, its catalog', (store) => {
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

  async function usageRows(): Promise<{ format: string; status: number | null; model: string }[]> {
    await dp.proxy.drain();
    return dp.cp.deps.db.query<{ format: string; status: number | null; model: string }>(
      `SELECT format, status, model FROM ledger_entries WHERE key_id = $1 AND kind = 'usage' ORDER BY created_at, request_id`,
      [k.keyId],
    );
  }

  const full = store.name === 'pglite';

  for (const [i, { kind, model, path }] of PROVIDER_KINDS.entries()) {
    const passthrough = path === '/v1/responses';
    if (!full && i !== 1) continue;
    describe(kind, () => {
      it('compacts when the provider is asked to (compaction_trigger), with its shell, an MCP tool and its goal tool; every call billed', async function () {
        this.timeout(180_000);
        const before = (await usageRows()).length;
        const mcp = passthrough
          ? { name: 'echo', namespace: 'mcp__echo', input: { text: 'ping' } }
          : { name: 'mcp__echo__echo', input: { text: 'ping' } };
        dp.fake.enqueue(
          calling([{ name: 'exec_command', input: { cmd: 'echo hello > a.txt' } }]),
          // Past the limit: Codex compacts before its next call.
          calling([mcp], 7000),
          QUIET,
          calling([{ name: 'create_goal', input: { objective: 'say done' } }]),
          ...Array.from({ length: 8 }, () => QUIET),
        );
        const out = await runCodexExec(base, k.secret, model, 'Write hello to a.txt, echo it through the MCP server, set a goal, then say done.', {
          provider: 'openai',
          config: [...SMALL_WINDOW, ...MCP_ECHO],
          timeoutMs: 150_000,
        });
        expect(out.exit, out.stderr).to.equal(0);
        expect(out.stderr).to.include('context compacted');
        const requests = dp.fake.requests.filter((r) => r.path === path);
        expect(requests.length).to.be.at.least(5);
        const bodies = requests.map((r) => text(r.body));
        // The shell ran, and the MCP tool answered.
        expect(bodies[1]).to.include('Process exited with code 0');
        expect(bodies.some((b) => b.includes('echo: ping'))).to.equal(true);
        const compaction = bodies.findIndex((b) =>
          passthrough ? b.includes('"compaction_trigger"') : b.includes(text(COMPACTION_PROMPT).slice(1, 40)),
        );
        expect(compaction, 'the compaction call').to.equal(2);
        // The next call carries the compaction instead of what it summarised: the provider's item, or the summary as text.
        const after = bodies[3]!;
        if (passthrough) expect(after).to.include('fake-encrypted-cmp_');
        else expect(after).to.include(text(SUMMARY_INTRO).slice(1, 40));
        expect(after).to.not.include('echo hello > a.txt');
        // The goal tool ran; its later output without a call_id reached the provider (as text where it has no Chat form), never a 400.
        expect(bodies.some((b) => b.includes('\\"status\\":\\"active\\"'))).to.equal(true);
        const goal = passthrough ? '"name":"goal_objective"' : 'Output of agent.goal_objective';
        expect(bodies.some((b) => b.includes(goal))).to.equal(true);
        const rows = (await usageRows()).slice(before);
        expect(rows).to.have.length(requests.length);
        expect(rows.every((r) => r.status === null || r.status < 400)).to.equal(true);
        expect(rows.filter((r) => r.format === 'compaction')).to.have.length(1);
        expect(rows.every((r) => r.model === model)).to.equal(true);
      });

      if (full)
        it('knows the alias from Tollgate’s catalog (no "model metadata not found"), patches with apply_patch, compacts on its own', async function () {
          this.timeout(180_000);
          const before = (await usageRows()).length;
          dp.fake.enqueue(
            calling([{ name: 'exec_command', input: { cmd: 'echo hello > a.txt' } }]),
            calling([{ name: 'apply_patch', input: { input: PATCH } }], 7000),
            ...Array.from({ length: 8 }, () => QUIET),
          );
          const out = await runCodexExec(base, k.secret, model, 'Write hello to a.txt, patch it, then say done.', {
            catalog: true,
            config: SMALL_WINDOW,
            timeoutMs: 150_000,
          });
          expect(out.exit, out.stderr).to.equal(0);
          expect(`${out.stdout}${out.stderr}`).to.not.match(/Model metadata for `[^`]+` not found/);
          const bodies = dp.fake.requests.filter((r) => r.path === path).map((r) => text(r.body));
          // apply_patch is Codex's free-form tool (offered only to a model its catalog says takes it), and the patch applied.
          // (A translated provider's function call came back to Codex as a custom_tool_call: it refuses apply_patch as a function.)
          if (passthrough) expect(bodies[2]).to.include('"type":"custom_tool_call"');
          expect(bodies[2]).to.include('Success. Updated the following files');
          expect(out.stderr).to.include('context compacted');
          const rows = (await usageRows()).slice(before);
          expect(rows).to.have.length(bodies.length);
          expect(rows.every((r) => r.status === null || r.status < 400)).to.equal(true);
        });
    });
  }
});
