import pg from 'pg';
import type { BatchRequest } from '../load/batch-client.js';
import { runBatch } from '../lib/batch.js';
import type { BenchContext } from '../lib/context.js';
import { withCpu } from '../lib/procs.js';
import { fmtMs, fmtNum } from '../lib/report.js';
import { bootstrap, consoleClient, startTollgate } from '../lib/tollgate.js';
import { databaseUrl, POSTGRES_URL } from '../lib/postgres.js';

const SCIM_TYPE = 'application/scim+json';
const CREATE_CONNECTIONS = 8;

/** Adds users `from..to` straight into the tables, as SCIM would have left them (user + active membership). */
async function seedUsers(client: pg.Client, orgId: string, from: number, to: number): Promise<void> {
  if (to < from) return;
  await client.query(
    `WITH u AS (
       INSERT INTO users (org_id, user_name, external_id, given_name, family_name, emails, active, source)
       SELECT $1, 'seed' || g || '@bench.example', 'ext-seed-' || g, 'Seed', 'User ' || g,
              jsonb_build_array(jsonb_build_object('value', 'seed' || g || '@bench.example', 'type', 'work', 'primary', true)), true, 'scim'
       FROM generate_series($2::int, $3::int) AS g
       RETURNING id)
     INSERT INTO memberships (org_id, user_id, role, status) SELECT $1, id, 'member', 'active' FROM u`,
    [orgId, from, to],
  );
  await client.query('ANALYZE users; ANALYZE memberships');
}

/** Scenario 6: SCIM on PostgreSQL — creates per second, `userName eq` filter latency at 10k and 100k users; `sw`, `co` and an emails value path at 100k. */
export async function scimScenario(ctx: BenchContext): Promise<void> {
  const dbName = `tollgate_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const modelsFile = await ctx.models();
  let client: pg.Client | undefined;
  // The control plane is what is measured here: run both halves in one process on the SUT core.
  const tollgate = await startTollgate({ shape: 'combined', placement: ctx.placement, modelsFile, databaseUrl: databaseUrl(dbName) });
  try {
    ctx.track(tollgate.proxy);
    ctx.removeLater(tollgate.dataDir);
    const org = await bootstrap(tollgate, 'bench-scim');
    const call = consoleClient(tollgate.baseUrl, org.console_token);
    await call('PUT', `/v1/orgs/${org.org_id}/scim`, { enabled: true });
    const { token } = await call<{ token: string }>('POST', `/v1/orgs/${org.org_id}/scim/token`);
    const base = `/v1/scim/v2/orgs/${org.org_id}`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': SCIM_TYPE, accept: SCIM_TYPE };
    const pid = tollgate.proxy.pid;

    const n = ctx.profile.scimCreates;
    const creates: BatchRequest[] = Array.from({ length: n }, (_, i) => ({
      method: 'POST',
      path: `${base}/Users`,
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `created${i}@bench.example`,
        externalId: `ext-created-${i}`,
        active: true,
        name: { givenName: 'Created', familyName: `User ${i}` },
        emails: [{ value: `created${i}@bench.example`, type: 'work', primary: true }],
      }),
    }));
    ctx.log(`scim: ${n} creates over ${CREATE_CONNECTIONS} connections`);
    const created = await withCpu({ sut: pid }, () => runBatch(ctx.dir, tollgate.baseUrl, creates, CREATE_CONNECTIONS, ctx.placement.driver));

    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    const filters: { users: number; seedS: number; result: Awaited<ReturnType<typeof runBatch>> }[] = [];
    const scans: { label: string; users: number; result: Awaited<ReturnType<typeof runBatch>> }[] = [];
    let seeded = 0;
    for (const target of [10_000, 100_000]) {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM users WHERE org_id = $1', [org.org_id]);
      const have = Number(rows[0]!.n);
      const t0 = Date.now();
      await seedUsers(client, org.org_id, seeded + 1, seeded + (target - have));
      seeded += Math.max(0, target - have);
      const seedS = (Date.now() - t0) / 1000;
      const queries: BatchRequest[] = Array.from({ length: ctx.profile.scimFilterQueries }, (_, i) => {
        // Mostly existing users (seeded and created), some absent, in varied case.
        const pick = (i * 7919) % (seeded + n);
        const name =
          i % 10 === 9 ? `absent${i}@bench.example` : pick < seeded ? `Seed${pick + 1}@Bench.Example` : `created${pick - seeded}@bench.example`;
        return {
          method: 'GET',
          path: `${base}/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`,
          headers: { authorization: headers.authorization, accept: SCIM_TYPE },
        };
      });
      ctx.log(`scim: ${queries.length} filter queries with ${fmtNum(target)} users (seeded in ${seedS.toFixed(1)}s)`);
      await runBatch(ctx.dir, tollgate.baseUrl, queries.slice(0, 200), 1, ctx.placement.driver); // warm-up
      filters.push({ users: target, seedS, result: await runBatch(ctx.dir, tollgate.baseUrl, queries, 1, ctx.placement.driver) });
    }

    // At the largest size: a prefix (sw, served by the text_pattern_ops index) and a substring (co, a scan of the org's users).
    const scanQueries = Math.max(50, Math.round(ctx.profile.scimFilterQueries / 5));
    const users = filters.at(-1)!.users;
    const n4 = (i: number) => ((i * 7919) % 9000) + 1000;
    for (const [label, filter] of [
      ['userName sw', (i: number) => `userName sw "Seed${n4(i)}"`],
      ['userName co', (i: number) => `userName co "ed${n4(i)}@"`],
      ['emails[type eq "work"].value eq', (i: number) => `emails[type eq "work"].value eq "seed${n4(i) * 7}@Bench.example"`],
    ] as const) {
      const queries: BatchRequest[] = Array.from({ length: scanQueries }, (_, i) => ({
        method: 'GET',
        path: `${base}/Users?count=20&filter=${encodeURIComponent(filter(i))}`,
        headers: { authorization: headers.authorization, accept: SCIM_TYPE },
      }));
      ctx.log(`scim: ${queries.length} "${label}" filter queries with ${fmtNum(users)} users`);
      await runBatch(ctx.dir, tollgate.baseUrl, queries.slice(0, 10), 1, ctx.placement.driver); // warm-up
      scans.push({ label, users, result: await runBatch(ctx.dir, tollgate.baseUrl, queries, 1, ctx.placement.driver) });
    }

    ctx.report.data.scim = {
      creates: {
        ...created.result,
        connections: CREATE_CONNECTIONS,
        cpuUsPerCreate: created.cpuUs.sut! / Math.max(1, created.result.requests - created.result.errors),
      },
      filters,
      scans,
    };
    const table = ctx.report.section('SCIM on PostgreSQL', ['operation', 'users', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'errors']);
    const row = (label: string, users: number, conns: number, q: (typeof filters)[number]['result']) =>
      table.row(
        label,
        fmtNum(users),
        String(conns),
        fmtNum(q.rps),
        fmtMs(q.latencyUs.p50),
        fmtMs(q.latencyUs.p99),
        fmtMs(q.latencyUs.p999),
        q.errors ? JSON.stringify(q.statuses) : '0',
      );
    row('POST /Users', n, CREATE_CONNECTIONS, created.result);
    for (const f of filters) row('GET /Users?filter=userName eq', f.users, 1, f.result);
    for (const f of scans) row(`GET /Users?filter=${f.label}&count=20`, f.users, 1, f.result);
    table.note(
      'sw: a 6-character prefix matching ~11 users (a range scan of the text_pattern_ops index). co: a substring matching one user, which no index serves: every user of the org is read (once: a page that is not full gives totalResults). emails value eq: one user, found through the GIN index on lower-cased addresses.',
    );
    table.note(
      'Users beyond the created ones are bulk-seeded with SQL (user + active membership); one in ten filters names an absent user; names vary in case.',
    );
  } finally {
    await client?.end();
    await tollgate.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((err: Error) => ctx.log(`could not drop ${dbName}: ${err.message}`));
    await admin.end();
  }
}
