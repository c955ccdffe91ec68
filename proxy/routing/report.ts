import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../shared/logger.js';
import type { ModelCatalog } from '../../shared/models.js';
import type { DeploymentReport } from '../../shared/contract/deployments.js';
import type { DeploymentHealth } from './health.js';

export interface DeploymentReports {
  /** Sends one report now (start-up, tests); never rejects. */
  send(): Promise<void>;
  stop(): void;
}

/** Every deployment id of the catalog, once each (two aliases may share one). */
function deploymentIds(catalog: ModelCatalog): string[] {
  const ids = new Set<string>();
  for (const m of catalog.models.values()) for (const d of m.deployments) ids.add(`${d.provider}/${d.upstream_model}`);
  return [...ids];
}

/** Names this proxy process in its reports: the host, and random bits for the processes one host runs. */
export function proxyId(): string {
  const host =
    hostname()
      .replace(/[^\w.:-]/g, '_')
      .slice(0, 180) || 'proxy';
  return `${host}:${randomBytes(4).toString('hex')}`;
}

/**
 * Tells the control plane, every `everyMs`, the state of the deployments this
 * proxy routes to, so the console's model page can show cooldowns and
 * circuits that live in the proxies (or their Redis). Its own report rather
 * than riding on the usage reports: those stop exactly when a deployment is
 * down (failed attempts are not billed) and are replayed late from the outbox.
 * A report that does not arrive is dropped: the next one carries the state.
 */
export function startDeploymentReports(
  send: (report: DeploymentReport) => Promise<void>,
  health: DeploymentHealth,
  catalog: ModelCatalog,
  everyMs: number,
  logger: Logger,
): DeploymentReports {
  const id = proxyId();
  const ids = deploymentIds(catalog);
  let failing = false;
  const once = async (): Promise<void> => {
    try {
      await send({ proxy_id: id, deployments: await health.report(ids) });
      failing = false;
    } catch (err) {
      // Said once per outage: the control plane's reachability is watched elsewhere.
      if (!failing) logger.warn({ err: (err as Error).message }, 'deployment health report not delivered');
      failing = true;
    }
  };
  const timer = setInterval(() => void once(), everyMs);
  timer.unref();
  return { send: once, stop: () => clearInterval(timer) };
}
