import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { seedOrg } from '../../support/control-plane.js';
import { ok } from '../../support/console.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import type { WireFormat } from '../../../proxy/call.js';

interface NewKey {
  id: string;
  key: string;
  prefix: string;
}

interface RequestRow {
  key_id: string | null;
  model: string | null;
  status: number;
  format: string;
  cost_usd: number;
  input_tokens: number;
  refusal_reason: string | null;
  refused_count: number | null;
}

/** Tollgate's own refusals of every reason, through a real proxy, reported to the usage API and CSV. */
describeEachStore('usage: calls Tollgate refused, by key, model and reason, without a cost', (store) => {
  let dp: DataPlane;
  let boot: BootstrapResult;
  let broke: BootstrapResult;
  let token: string;
  let usageUrl: string;
  const keys: Record<string, NewKey> = {};

  async function call(key: NewKey | string, format: WireFormat, body: unknown, slug = boot.workspace_slug): Promise<number> {
    const res = await edgeCall(dp.proxy.url, format, slug, typeof key === 'string' ? key : key.key, body);
    return res.status;
  }

  before(async function () {
    this.timeout(60_000);
    dp = await startDataPlane(store);
    boot = await seedOrg(dp.cp.deps);
    broke = await seedOrg(dp.cp.deps);
    token = boot.console_token;
    const base = dp.cp.url;
    usageUrl = `${base}/v1/workspaces/${boot.workspace_id}/usage`;
    await ok(`${base}/v1/workspaces/${boot.workspace_id}/credits`, { token, body: { amount_usd: 50 } });
    const team = await ok(`${base}/v1/workspaces/${boot.workspace_id}/teams`, { token, body: { name: 'Agents' } }, 201);
    await ok(`${base}/v1/teams/${team.id}/models`, { token, method: 'PUT', body: { models: ['tg/sonnet'] } });
    const newKey = (name: string, extra: Record<string, unknown> = {}) =>
      ok(`${base}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name, ...extra } }, 201) as Promise<NewKey>;
    keys.plain = await newKey('plain');
    keys.limited = await newKey('limited', { rpm: 1 });
    // A budget far below one call's worst case: refused at the hold.
    keys.tiny = await newKey('tiny', { budget_usd: 0.0001 });
    keys.revoked = await newKey('revoked');
    await ok(`${base}/v1/keys/${keys.revoked.id}`, { token, method: 'DELETE' }, 204);
    // A workspace without credits: refused for its balance.
    const brokeTeam = await ok(`${base}/v1/workspaces/${broke.workspace_id}/teams`, { token: broke.console_token, body: { name: 'B' } }, 201);
    await ok(`${base}/v1/teams/${brokeTeam.id}/models`, { token: broke.console_token, method: 'PUT', body: { models: ['tg/sonnet'] } });
    keys.broke = (await ok(
      `${base}/v1/teams/${brokeTeam.id}/keys`,
      { token: broke.console_token, body: { kind: 'team', name: 'broke' } },
      201,
    )) as NewKey;

    expect(await call(keys.plain, 'chat', modelBody('chat'))).to.equal(200);
    expect(await call(keys.limited, 'chat', modelBody('chat'))).to.equal(200);
    for (let i = 0; i < 5; i++) expect(await call(keys.limited, 'chat', modelBody('chat'))).to.equal(429);
    expect(await call(keys.tiny, 'messages', modelBody('messages', { max_tokens: 64_000 }))).to.equal(402);
    expect(await call(keys.plain, 'chat', modelBody('chat', { model: 'tg/haiku' }))).to.equal(403);
    expect(await call(keys.plain, 'responses', modelBody('responses', { model: 'tg/nope' }))).to.equal(404);
    expect(await call(keys.plain, 'chat', { model: 'tg/sonnet' })).to.equal(400);
    expect(await call(keys.revoked, 'chat', modelBody('chat'))).to.equal(401);
    // Nobody's key: refused, and counted nowhere.
    expect(await call('tg_not_a_key', 'chat', modelBody('chat'))).to.equal(401);
    expect(await call(keys.broke, 'chat', modelBody('chat'), broke.workspace_slug)).to.equal(402);
    await dp.proxy.drain();
  });
  after(async () => dp?.close());

  it('the aggregates count refusals by reason apart from the calls served, at no cost', async () => {
    const byReason = await ok(`${usageUrl}?group_by=reason`, { token });
    const counts = Object.fromEntries(
      byReason.groups.map((g: { label: string; refused: number; requests: number }) => [g.label, [g.requests, g.refused]]),
    );
    expect(counts).to.deep.equal({
      Served: [2, 0],
      rate_limit: [0, 5],
      budget: [0, 1],
      model_access: [0, 2],
      bad_request: [0, 1],
      key: [0, 1],
    });
    expect(byReason.totals).to.include({ requests: 2, refused: 10, errors: 0 });
    const served = await ok(`${usageUrl}?group_by=reason&refused=false`, { token });
    const refused = await ok(`${usageUrl}?group_by=reason&refused=true`, { token });
    expect(refused.totals.spend_usd).to.equal(0);
    expect(served.totals.spend_usd).to.be.closeTo(byReason.totals.spend_usd, 1e-12);
  });

  it('by key and by model: which key stopped, on which model', async () => {
    const byKey = await ok(`${usageUrl}?group_by=key`, { token });
    const refusedOf = (id: string) => byKey.groups.find((g: { id: string }) => g.id === id)?.refused;
    expect(refusedOf(keys.limited!.id)).to.equal(5);
    expect(refusedOf(keys.tiny!.id)).to.equal(1);
    expect(refusedOf(keys.plain!.id)).to.equal(3);
    expect(refusedOf(keys.revoked!.id)).to.equal(1);
    const byModel = await ok(`${usageUrl}?group_by=model&refused=true`, { token });
    const models = Object.fromEntries(byModel.groups.map((g: { label: string; refused: number }) => [g.label, g.refused]));
    expect(models).to.deep.equal({
      'tg/sonnet': 6,
      'tg/haiku': 1,
      'tg/nope': 1,
      'None (refused before its body was read)': 2,
    });
  });

  it('the request log: rows with refusal_reason and a count, no tokens, no cost; filtered by reason', async () => {
    const { requests } = (await ok(`${usageUrl}/requests?refused=true&limit=100`, { token })) as { requests: RequestRow[] };
    expect(requests.reduce((n, r) => n + r.refused_count!, 0)).to.equal(10);
    for (const r of requests) {
      expect(r.refusal_reason).to.be.a('string');
      expect(r.cost_usd).to.equal(0);
      expect(r.input_tokens).to.equal(0);
    }
    // Five 429s of one key in a burst are one row (or two, should the burst straddle a report window), not five.
    const limited = requests.filter((r) => r.key_id === keys.limited!.id);
    expect(limited.length).to.be.within(1, 2);
    expect(limited.every((r) => r.refusal_reason === 'rate_limit' && r.status === 429 && r.model === 'tg/sonnet')).to.equal(true);
    const budget = (await ok(`${usageUrl}/requests?reason=budget`, { token })) as { requests: RequestRow[] };
    expect(budget.requests.map((r) => [r.key_id, r.status, r.format, r.refused_count])).to.deep.equal([[keys.tiny!.id, 402, 'messages', 1]]);
    const servedOnly = (await ok(`${usageUrl}/requests?refused=false`, { token })) as { requests: RequestRow[] };
    expect(servedOnly.requests).to.have.length(2);
    expect(servedOnly.requests.every((r) => r.refusal_reason === null && r.refused_count === null)).to.equal(true);
  });

  it('the CSV exports carry the refused count and each row’s reason', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const summary = (await (await fetch(`${usageUrl}?group_by=reason&format=csv`, { headers })).text()).trim().split(/\r?\n/);
    const head = summary[0]!.split(',');
    expect(head).to.include('refused');
    const refusedAt = head.indexOf('refused');
    const reasonAt = head.indexOf('reason');
    const byReason = new Map<string, number>();
    for (const line of summary.slice(1)) {
      const cells = line.split(',');
      byReason.set(cells[reasonAt]!, (byReason.get(cells[reasonAt]!) ?? 0) + Number(cells[refusedAt]));
    }
    expect(Object.fromEntries(byReason)).to.deep.equal({ Served: 0, rate_limit: 5, budget: 1, model_access: 2, bad_request: 1, key: 1 });

    const log = (await (await fetch(`${usageUrl}/requests?format=csv&refused=true`, { headers })).text()).trim().split(/\r?\n/);
    const cols = log[0]!.split(',');
    expect(cols.slice(-3)).to.deep.equal(['refusal_reason', 'refused_count', 'settled_at']);
    const rows = log.slice(1).map((l) => l.split(','));
    expect(rows.reduce((n, r) => n + Number(r.at(-2)), 0)).to.equal(10);
    expect(new Set(rows.map((r) => r.at(-3)))).to.deep.equal(new Set(['rate_limit', 'budget', 'model_access', 'bad_request', 'key']));
  });

  it('a workspace without credits shows its balance refusal; a key nobody knows is counted in no workspace', async () => {
    const usage = await ok(`${dp.cp.url}/v1/workspaces/${broke.workspace_id}/usage?group_by=reason`, { token: broke.console_token });
    expect(usage.groups.map((g: { label: string; refused: number }) => [g.label, g.refused])).to.deep.equal([['balance', 1]]);
    const [row] = await dp.cp.deps.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_entries WHERE refusal_reason IS NOT NULL AND key_id IS NULL`,
    );
    expect(row!.n).to.equal(0);
  });

  it('a flood of refusals is a handful of ledger rows, every call still counted', async function () {
    this.timeout(60_000);
    const rows = async () =>
      (
        await dp.cp.deps.db.query<{ n: number; calls: number }>(
          `SELECT count(*)::int AS n, COALESCE(sum(refused_count), 0)::int AS calls FROM ledger_entries WHERE key_id = $1 AND refusal_reason IS NOT NULL`,
          [keys.limited!.id],
        )
      )[0]!;
    const before = await rows();
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: 300 }, () => call(keys.limited!, 'chat', modelBody('chat'))));
    const seconds = (performance.now() - started) / 1000;
    await dp.proxy.drain();
    expect(statuses.every((s) => s === 429)).to.equal(true);
    const after = await rows();
    expect(after.calls - before.calls).to.equal(300);
    // One row per one-second window the burst spanned (and the window it started in).
    expect(after.n - before.n).to.be.at.most(Math.ceil(seconds) + 1);
  });

  it("a budget refusal records the key's 100 % alert once, though its spend never reached the budget", async () => {
    const alerts = () =>
      dp.cp.deps.db.query<{ payload: { key_id: string; threshold_percent: number; spend_usd: number } }>(
        `SELECT payload FROM alert_events WHERE type = 'key.budget_crossed' AND payload->>'key_id' = $1`,
        [keys.tiny!.id],
      );
    const first = await alerts();
    expect(first.map((a) => a.payload.threshold_percent)).to.deep.equal([100]);
    expect(first[0]!.payload.spend_usd).to.equal(0);
    // Refused again: no second alert at the same budget.
    expect(await call(keys.tiny!, 'chat', modelBody('chat', { max_tokens: 64_000 }))).to.equal(402);
    await dp.proxy.drain();
    expect(await alerts()).to.have.length(1);
  });
});
