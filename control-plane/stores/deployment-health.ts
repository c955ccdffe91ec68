import type { DeploymentHealth } from '../../shared/contract/deployments.js';
import type { Queryable } from '../db/database.js';

export interface DeploymentReportRow {
  proxy_id: string;
  reported_at: Date;
  deployments: DeploymentHealth[];
}

/** Keeps a proxy's latest report (one row per proxy process), and drops the rows of proxies silent since `forgetBefore`. */
export async function deployment_report_upsert(
  q: Queryable,
  r: { proxy_id: string; deployments: DeploymentHealth[]; now: Date; forgetBefore: Date },
): Promise<void> {
  await q.query(
    `WITH gone AS (DELETE FROM deployment_health_reports WHERE reported_at < $4 AND proxy_id <> $1)
     INSERT INTO deployment_health_reports (proxy_id, reported_at, deployments) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (proxy_id) DO UPDATE SET reported_at = EXCLUDED.reported_at, deployments = EXCLUDED.deployments`,
    [r.proxy_id, r.now, JSON.stringify(r.deployments), r.forgetBefore],
  );
}

/** The reports received since `since`, oldest first. */
export async function deployment_report_list_since(q: Queryable, since: Date): Promise<DeploymentReportRow[]> {
  return q.query<DeploymentReportRow>(
    `SELECT proxy_id, reported_at, deployments FROM deployment_health_reports WHERE reported_at >= $1 ORDER BY reported_at, proxy_id`,
    [since],
  );
}
