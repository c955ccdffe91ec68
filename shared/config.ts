import { randomBytes } from 'node:crypto';
import type { Config, ConfigMode, OpsSettings, ProxySettings } from './config-types.js';
import { readTable, url, type DefaultContext } from './config-parsers.js';
import { ALERTS, CORE, LIMITS, OPS, OTEL, PORTS, PROXY, type OtelTable } from './config-table.js';
import { loadModelCatalog } from './models.js';

export type * from './config-types.js';
export { parseSecretsKey, redactUrl } from './config-parsers.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once (the variables are listed in
 * shared/config-table.ts); every problem is reported together, each naming
 * its variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv, mode: ConfigMode = 'all'): Config {
  const problems: string[] = [];
  const ctx: DefaultContext = { env, mode, controlPlanePort: 0, proxyPort: 0 };
  Object.assign(ctx, readTable(PORTS, ctx, problems));
  const core = readTable(CORE, ctx, problems);
  const dataPlaneToken = core.dataPlaneToken ?? generatedToken(mode, env.DATA_PLANE_TOKEN, problems);
  if (mode === 'proxy' && !core.controlPlaneUrl) problems.push('CONTROL_PLANE_URL: required when the proxy runs alone');
  const { catalog, problems: modelProblems } = loadModelCatalog(core.modelsFile, env);
  problems.push(...modelProblems);

  const { webSocketLifetimeSeconds, webSocketIdleSeconds, ...proxyRead } = readTable(PROXY, ctx, problems);
  const proxy: ProxySettings = { ...proxyRead, webSocketLifetimeMs: webSocketLifetimeSeconds * 1000, webSocketIdleMs: webSocketIdleSeconds * 1000 };
  // An idle hold account in Redis lapses after twice the hold TTL; a key served
  // from the stale window must not carry a snapshot older than that (docs/proxy.md).
  if (proxy.holdTtlSeconds * 2000 <= proxy.keyStaleMs) {
    problems.push(
      `PROXY_HOLD_TTL_SECONDS: must be more than half the stale window PROXY_KEY_STALE_MS (${proxy.holdTtlSeconds} s against ${proxy.keyStaleMs / 1000} s)`,
    );
  }
  const { shutdownGraceSeconds, ...opsRead } = readTable(OPS, ctx, problems);
  const ops: OpsSettings = {
    ...opsRead,
    metricsPortSet: Boolean(env.METRICS_PORT),
    shutdownGraceMs: shutdownGraceSeconds * 1000,
    tracesEndpoint: tracesEndpoint(readTable(OTEL, ctx, problems), problems),
  };
  const alerts = readTable(ALERTS, ctx, problems);
  const limits = readTable(LIMITS, ctx, problems);

  if (problems.length) throw new ConfigError(problems);
  return { ...core, controlPlanePort: ctx.controlPlanePort, proxyPort: ctx.proxyPort, dataPlaneToken, models: catalog!, proxy, ops, alerts, limits };
}

/**
 * DATA_PLANE_TOKEN unset (or refused, `given`, already reported): one half
 * alone cannot run without it; both in one process share a generated one.
 */
function generatedToken(mode: ConfigMode, given: string | undefined, problems: string[]): string {
  if (!given && (mode === 'proxy' || mode === 'control-plane')) {
    problems.push(`DATA_PLANE_TOKEN: required when the ${mode} runs alone (the shared secret between the halves)`);
  }
  return randomBytes(32).toString('base64url');
}

/**
 * The standard OpenTelemetry variables: the traces endpoint as given, or the
 * base endpoint plus /v1/traces (OTLP/HTTP); none, or OTEL_SDK_DISABLED /
 * OTEL_TRACES_EXPORTER=none, leaves tracing off (and the URLs unchecked).
 */
function tracesEndpoint(otel: OtelTable, problems: string[]): string | undefined {
  if (otel.sdkDisabled?.toLowerCase() === 'true' || otel.tracesExporter === 'none') return undefined;
  const checked = (name: string, raw: string | undefined): string | undefined => {
    const parsed = raw === undefined ? undefined : url(['http:', 'https:'])(raw);
    if (parsed?.ok === false) problems.push(`${name}: ${parsed.problem}`);
    return parsed?.ok ? parsed.value : undefined;
  };
  const full = checked('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', otel.tracesEndpoint);
  if (full) return full;
  const base = checked('OTEL_EXPORTER_OTLP_ENDPOINT', otel.endpoint);
  return base ? `${base}/v1/traces` : undefined;
}
