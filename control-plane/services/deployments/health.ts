import {
  DEPLOYMENT_REPORT_FRESH_MS,
  type DeploymentHealth,
  type DeploymentReport,
  type DeploymentStateName,
} from '../../../shared/contract/deployments.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { assertAdmin, type ConsoleAuth } from '../auth/console-auth.js';
import { deployment_report_list_since, deployment_report_upsert, type DeploymentReportRow } from '../../stores/deployment-health.js';

/** A proxy silent this long is forgotten (its row deleted when another report arrives). */
const FORGET_MS = 24 * 3_600_000;

/** Keeps the proxy's latest report; when it was received is the control plane's clock, not the proxy's. */
export async function recordDeploymentReport(deps: ControlPlaneDeps, report: DeploymentReport): Promise<void> {
  const now = deps.clock.now();
  await deployment_report_upsert(deps.db, {
    proxy_id: report.proxy_id,
    deployments: report.deployments,
    now,
    forgetBefore: new Date(now.getTime() - FORGET_MS),
  });
}

/** `unknown`: no proxy has reported lately, so nobody can say. */
export type ShownState = DeploymentStateName | 'unknown';

export interface DeploymentView {
  id: string;
  provider: string;
  upstream_model: string;
  weight: number | null;
  state: ShownState;
  /** When a cooling deployment or an open circuit is back (the half-open probe for a circuit); null otherwise. */
  back_at: string | null;
  /** Failures in a row, the most any proxy counts. */
  failures: number;
  /** How many of the reporting proxies see this state (without Redis each proxy keeps its own). */
  proxies: number;
}

export interface ModelDeploymentsView {
  /** The proxies whose report is fresh, and when each last reported. */
  reports: { proxy_id: string; reported_at: string }[];
  models: { alias: string; fallbacks: string[]; deployments: DeploymentView[] }[];
}

/** Worse states win when proxies disagree (each proxy keeps its own state without Redis). */
const SEVERITY: Record<DeploymentStateName, number> = { healthy: 0, cooling: 1, half_open: 2, open: 3 };

/** One proxy's word on a deployment, aged to now: a cooldown over is healthy again, an open circuit past its cooldown half-open. */
function aged(h: DeploymentHealth, reportedAt: Date, now: number): { state: DeploymentStateName; backAt: number | undefined } {
  if (h.state !== 'cooling' && h.state !== 'open') return { state: h.state, backAt: undefined };
  const backAt = reportedAt.getTime() + h.back_in_ms;
  if (backAt > now) return { state: h.state, backAt };
  return { state: h.state === 'open' ? 'half_open' : 'healthy', backAt: undefined };
}

function viewOf(
  id: string,
  provider: string,
  upstream: string,
  weight: number | undefined,
  reports: DeploymentReportRow[],
  now: number,
): DeploymentView {
  const view: DeploymentView = {
    id,
    provider,
    upstream_model: upstream,
    weight: weight ?? null,
    state: reports.length ? 'healthy' : 'unknown',
    back_at: null,
    failures: 0,
    proxies: reports.length,
  };
  let backAt = 0;
  for (const r of reports) {
    const h = r.deployments.find((d) => d.id === id);
    if (!h) continue;
    view.failures = Math.max(view.failures, h.failures);
    const seen = aged(h, r.reported_at, now);
    if (seen.state === 'healthy') continue;
    const shown = view.state === 'healthy' || view.state === 'unknown' ? 0 : SEVERITY[view.state];
    if (SEVERITY[seen.state] > shown) {
      view.state = seen.state;
      view.proxies = 0;
      backAt = 0;
    }
    if (seen.state === view.state) {
      view.proxies++;
      backAt = Math.max(backAt, seen.backAt ?? 0);
    }
  }
  view.back_at = backAt ? new Date(backAt).toISOString() : null;
  return view;
}

/**
 * The console's model page (owners and admins): every alias with its
 * deployments and the state the proxies last reported for each.
 */
export async function listModelDeployments(deps: ControlPlaneDeps, auth: ConsoleAuth): Promise<ModelDeploymentsView> {
  assertAdmin(auth);
  const now = deps.clock.now().getTime();
  const reports = await deployment_report_list_since(deps.db, new Date(now - DEPLOYMENT_REPORT_FRESH_MS));
  const models = [...deps.config.models.models.values()].map((m) => ({
    alias: m.alias,
    fallbacks: m.fallbacks,
    deployments: m.deployments.map((d) => viewOf(`${d.provider}/${d.upstream_model}`, d.provider, d.upstream_model, d.weight, reports, now)),
  }));
  return { reports: reports.map((r) => ({ proxy_id: r.proxy_id, reported_at: r.reported_at.toISOString() })), models };
}
