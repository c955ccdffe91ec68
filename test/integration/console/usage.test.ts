import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { call, seedOrg } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';
import { edgeCall, modelBody } from '../../support/edge-calls.js';
import type { BootstrapResult } from '../../../control-plane/services/orgs/bootstrap.js';
import type { WireFormat } from '../../../proxy/call.js';

interface Org {
  boot: BootstrapResult;
  teamId: string;
  personal: { id: string; key: string; prefix: string };
  team: { id: string; key: string; prefix: string };
}

/** An org set up through the console API: credits, a team allowed two models, a personal and a team key. */
async function setUpOrg(dp: DataPlane): Promise<Org> {
  const boot = await seedOrg(dp.cp.deps);
  const base = dp.cp.url;
  const token = boot.console_token;
  await ok(`${base}/v1/workspaces/${boot.workspace_id}/credits`, { token, body: { amount_usd: 50 } });
  const team = await ok(`${base}/v1/workspaces/${boot.workspace_id}/teams`, { token, body: { name: 'Platform' } }, 201);
  await ok(`${base}/v1/teams/${team.id}/members`, { token, body: { user_id: boot.owner_user_id } }, 204);
  await ok(`${base}/v1/teams/${team.id}/models`, { token, method: 'PUT', body: { models: ['tg/sonnet', 'tg/haiku'] } });
  const personal = await ok(`${base}/v1/teams/${team.id}/keys`, { token, body: { kind: 'personal', name: 'laptop' } }, 201);
  const teamKey = await ok(`${base}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name: 'ci' } }, 201);
  return { boot, teamId: team.id, personal, team: teamKey };
}

async function callModel(dp: DataPlane, org: Org, key: string, format: WireFormat, model: string): Promise<number> {
  const res = await edgeCall(dp.proxy.url, format, org.boot.workspace_slug, key, modelBody(format, { model }));
  return res.status;
}

describeEachStore('console API: usage by time and group, the request log, and CSV', (store) => {
  let dp: DataPlane;
  let acme: Org;
  let other: Org;
  let usageUrl: string;
  let requestsUrl: string;
  let token: string;

  before(async function () {
    this.timeout(60_000);
    dp = await startDataPlane(store);
    acme = await setUpOrg(dp);
    other = await setUpOrg(dp);
    token = acme.boot.console_token;
    usageUrl = `${dp.cp.url}/v1/workspaces/${acme.boot.workspace_id}/usage`;
    requestsUrl = `${usageUrl}/requests`;
    // Real traffic on all three formats: three billed calls on the personal key, one on the team key, one the provider refuses.
    expect(await callModel(dp, acme, acme.personal.key, 'chat', 'tg/sonnet')).to.equal(200);
    expect(await callModel(dp, acme, acme.personal.key, 'messages', 'tg/sonnet')).to.equal(200);
    expect(await callModel(dp, acme, acme.personal.key, 'responses', 'tg/haiku')).to.equal(200);
    expect(await callModel(dp, acme, acme.team.key, 'messages', 'tg/haiku')).to.equal(200);
    dp.fake.enqueue({ kind: 'error', status: 529 });
    expect(await callModel(dp, acme, acme.team.key, 'chat', 'tg/sonnet')).to.equal(529);
    expect(await callModel(dp, other, other.personal.key, 'chat', 'tg/sonnet')).to.equal(200);
    await dp.proxy.drain();
  });
  after(async () => dp?.close());

  async function keySpends(): Promise<Map<string, number>> {
    const keys = await ok(`${dp.cp.url}/v1/teams/${acme.teamId}/keys`, { token });
    return new Map(keys.map((k: { id: string; spend_usd: number }) => [k.id, k.spend_usd]));
  }

  it('totals match the keys’ spend and the balance; errors count the refused call; groups name their key, team, user and model', async () => {
    const byModel = await ok(`${usageUrl}?group_by=model`, { token });
    expect(byModel.totals).to.include({ requests: 5, errors: 1 });
    expect(byModel.totals.input_tokens).to.be.greaterThan(0);
    expect(byModel.totals.output_tokens).to.be.greaterThan(0);
    const spends = await keySpends();
    const keySpend = spends.get(acme.personal.id)! + spends.get(acme.team.id)!;
    expect(byModel.totals.spend_usd).to.be.closeTo(keySpend, 1e-9);
    const ws = await ok(`${dp.cp.url}/v1/workspaces/${acme.boot.workspace_id}`, { token });
    expect(ws.balance_usd + byModel.totals.spend_usd).to.be.closeTo(50, 1e-9);
    expect(byModel.groups.map((g: { label: string; requests: number }) => [g.label, g.requests]).sort()).to.deep.equal([
      ['tg/haiku', 2],
      ['tg/sonnet', 3],
    ]);

    const byKey = await ok(`${usageUrl}?group_by=key`, { token });
    const personal = byKey.groups.find((g: { id: string }) => g.id === acme.personal.id);
    expect(personal).to.include({ label: `laptop (${acme.personal.prefix}…)`, requests: 3, errors: 0 });
    expect(personal.spend_usd).to.be.closeTo(spends.get(acme.personal.id)!, 1e-9);
    expect(byKey.groups.find((g: { id: string }) => g.id === acme.team.id)).to.include({
      label: `ci (${acme.team.prefix}…)`,
      requests: 2,
      errors: 1,
    });

    const byTeam = await ok(`${usageUrl}?group_by=team`, { token });
    expect(byTeam.groups).to.have.length(1);
    expect(byTeam.groups[0]).to.include({ id: acme.teamId, label: 'Platform', requests: 5 });

    const byUser = await ok(`${usageUrl}?group_by=user`, { token });
    const labels = byUser.groups.map((g: { label: string; requests: number }) => [g.label, g.requests]).sort();
    expect(labels).to.deep.equal([
      ['Team keys (no owner)', 2],
      [`owner@${acme.boot.org_slug}.test`, 3],
    ]);
  });

  it('buckets are UTC days or hours, and every bucket adds up to the totals', async () => {
    for (const granularity of ['day', 'hour']) {
      const usage = await ok(`${usageUrl}?granularity=${granularity}&group_by=model`, { token });
      expect(usage.granularity).to.equal(granularity);
      const now = new Date();
      const start =
        granularity === 'day'
          ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
          : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours()));
      for (const b of usage.buckets) expect(new Date(b.bucket).getTime()).to.be.at.most(start.getTime());
      const requests = usage.buckets.reduce((n: number, b: { requests: number }) => n + b.requests, 0);
      const spend = usage.buckets.reduce((n: number, b: { spend_usd: number }) => n + b.spend_usd, 0);
      expect(requests).to.equal(5);
      expect(spend).to.be.closeTo(usage.totals.spend_usd, 1e-9);
    }
  });

  it('filters by model, key, team and user narrow the totals', async () => {
    expect((await ok(`${usageUrl}?model=tg/haiku`, { token })).totals.requests).to.equal(2);
    expect((await ok(`${usageUrl}?key_id=${acme.team.id}`, { token })).totals).to.include({ requests: 2, errors: 1 });
    expect((await ok(`${usageUrl}?team_id=${acme.teamId}`, { token })).totals.requests).to.equal(5);
    expect((await ok(`${usageUrl}?user_id=${acme.boot.owner_user_id}`, { token })).totals.requests).to.equal(3);
    const past = await ok(`${usageUrl}?from=2020-01-01T00:00:00Z&to=2020-01-31T00:00:00Z`, { token });
    expect(past.totals).to.deep.equal({
      spend_usd: 0,
      requests: 0,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cache_saved_usd: 0,
      errors: 0,
      refused: 0,
    });
  });

  it('the request log pages newest first through every call, with format, status, tokens, cost and latency', async () => {
    const seen: {
      request_id: string;
      time: string;
      settled_at: string;
      format: string;
      status: number;
      cost_usd: number;
      latency_ms: number;
      key_name: string;
      team_name: string;
      model: string;
    }[] = [];
    let cursor: string | null = null;
    do {
      const page: { requests: typeof seen; next_cursor: string | null } = await ok(`${requestsUrl}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token,
      });
      expect(page.requests.length).to.be.at.most(2);
      seen.push(...page.requests);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).to.have.length(5);
    expect(new Set(seen.map((r) => r.request_id)).size).to.equal(5);
    const times = seen.map((r) => r.time);
    expect([...times].sort().reverse()).to.deep.equal(times);
    expect(seen.map((r) => r.format).sort()).to.deep.equal(['chat', 'chat', 'messages', 'messages', 'responses']);
    expect(seen.map((r) => r.status).sort()).to.deep.equal([200, 200, 200, 200, 529]);
    for (const r of seen) {
      expect(r.latency_ms).to.be.a('number').and.at.least(0);
      // `time` is when the proxy received the call: at least its latency before the control plane recorded it.
      expect(Date.parse(r.settled_at) - Date.parse(r.time), r.request_id).to.be.at.least(r.latency_ms - 1);
      expect(r.team_name).to.equal('Platform');
      expect(['laptop', 'ci']).to.include(r.key_name);
    }
    const refused = seen.find((r) => r.status === 529)!;
    expect(refused).to.include({ cost_usd: 0, key_name: 'ci', model: 'tg/sonnet' });
    const total = (await ok(usageUrl, { token })).totals.spend_usd;
    expect(seen.reduce((n, r) => n + r.cost_usd, 0)).to.be.closeTo(total, 1e-9);

    const errors = await ok(`${requestsUrl}?errors=true`, { token });
    expect(errors.requests.map((r: { request_id: string }) => r.request_id)).to.deep.equal([refused.request_id]);
  });

  it("another workspace's cursor pages nothing of this one (security finding 8)", async () => {
    const otherUrl = `${dp.cp.url}/v1/workspaces/${other.boot.workspace_id}/usage/requests`;
    const theirs = await ok(`${otherUrl}?limit=1`, { token: other.boot.console_token });
    expect(theirs.requests).to.have.length(1);
    // Their only row as a cursor: unscoped, it would page every acme row written before it.
    const cursor = Buffer.from(
      `r${(await store.db.query<{ id: string }>(`SELECT id::text AS id FROM ledger_entries WHERE request_id = $1`, [theirs.requests[0].request_id]))[0]!.id}`,
    ).toString('base64url');
    const page = await ok(`${requestsUrl}?limit=50&cursor=${cursor}`, { token });
    expect(page.requests).to.deep.equal([]);
    expect(page.next_cursor).to.equal(null);
  });

  it('CSV exports hold the same rows and sums as the JSON answers', async () => {
    const json = await ok(`${usageUrl}?group_by=key`, { token });
    const res = await fetch(`${usageUrl}?group_by=key&format=csv`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.match(/^attachment; filename="usage-by-day-and-key-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv"$/);
    const [header, ...lines] = (await res.text()).trimEnd().split('\r\n');
    expect(header).to.equal(
      'bucket,key,key_id,spend_usd,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,cache_saved_usd,errors,refused',
    );
    expect(lines).to.have.length(json.buckets.length);
    const csvSpend = lines.reduce((n, l) => n + Number(l.split(',')[3]), 0);
    expect(csvSpend).to.be.closeTo(json.totals.spend_usd, 1e-9);

    const requests = await fetch(`${requestsUrl}?format=csv`, { headers: { authorization: `Bearer ${token}` } });
    const [rHeader, ...rLines] = (await requests.text()).trimEnd().split('\r\n');
    expect(rHeader).to.equal(
      'time,request_id,key_name,key_prefix,key_id,team,user,model,format,status,input_tokens,output_tokens,' +
        'cache_read_tokens,cache_write_tokens,cache_write_1h_tokens,web_search_requests,cost_usd,cache_saved_usd,latency_ms,deployment,' +
        'refusal_reason,refused_count,settled_at',
    );
    expect(rLines).to.have.length(5);
    expect(rLines.reduce((n, l) => n + Number(l.split(',')[16]), 0)).to.be.closeTo(json.totals.spend_usd, 1e-9);
  });

  it('another organization’s usage never appears, and its token cannot read this workspace', async () => {
    const theirs = await ok(`${dp.cp.url}/v1/workspaces/${other.boot.workspace_id}/usage`, { token: other.boot.console_token });
    expect(theirs.totals.requests).to.equal(1);
    const theirLog = await ok(`${dp.cp.url}/v1/workspaces/${other.boot.workspace_id}/usage/requests`, { token: other.boot.console_token });
    const ours = await ok(`${requestsUrl}?limit=500`, { token });
    const ourIds = new Set(ours.requests.map((r: { request_id: string }) => r.request_id));
    for (const r of theirLog.requests) expect(ourIds.has(r.request_id)).to.equal(false);
    // Their key as a filter on our workspace matches nothing.
    expect((await ok(`${usageUrl}?key_id=${other.personal.id}`, { token })).totals.requests).to.equal(0);
    for (const url of [usageUrl, requestsUrl, `${usageUrl}?format=csv`]) {
      const res = await call(url, { token: other.boot.console_token });
      expect(res.status, url).to.equal(404);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
    }
    expect((await call(usageUrl)).status).to.equal(401);
  });

  it('a member sees the usage of their own teams’ keys only; admins see the whole workspace', async () => {
    const member = await addMember(dp.cp.deps, acme.boot.org_id);
    expect((await ok(usageUrl, { token: member.token })).totals.requests).to.equal(0);
    expect((await ok(requestsUrl, { token: member.token })).requests).to.deep.equal([]);
    await ok(`${dp.cp.url}/v1/teams/${acme.teamId}/members`, { token, body: { user_id: member.user_id } }, 204);
    expect((await ok(usageUrl, { token: member.token })).totals.requests).to.equal(5);
    const admin = await addMember(dp.cp.deps, acme.boot.org_id, { role: 'admin' });
    expect((await ok(usageUrl, { token: admin.token })).totals.requests).to.equal(5);
  });

  it('bad queries answer 400 problem+json naming the parameter', async () => {
    const cases: [string, string][] = [
      ['granularity=week', 'granularity'],
      ['group_by=colour', 'group_by'],
      ['from=yesterday', 'from'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from: must be before to'],
      ['granularity=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'to: the range may span at most 31 days'],
      ['key_id=not-a-uuid', 'key_id'],
      ['colour=red', 'unknown field(s) "colour"'],
      ['format=xml', 'format'],
    ];
    for (const [query, detail] of cases) {
      const res = await call(`${usageUrl}?${query}`, { token });
      expect(res.status, query).to.equal(400);
      expect(res.headers.get('content-type')).to.include('application/problem+json');
      expect(res.body.detail, query).to.include(detail);
    }
    for (const [query, detail] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['cursor=bm9wZQ', 'cursor: not a cursor this API gave out'],
      ['errors=maybe', 'errors'],
    ]) {
      const res = await call(`${requestsUrl}?${query}`, { token });
      expect(res.status, query).to.equal(400);
      expect(res.body.detail, query).to.include(detail);
    }
  });
});
