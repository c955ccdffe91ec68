import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { loadModelCatalog, type ModelCatalog } from './models.js';
import { packagePath } from './package-root.js';

export const DEFAULT_MODELS_FILE = packagePath('models.example.json');

export interface Config {
  controlPlanePort: number;
  proxyPort: number;
  /** Interface both servers listen on. */
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  publicBaseUrl: string;
  edgeBaseUrl: string;
  modelsFile: string;
  models: ModelCatalog;
  controlPlaneUrl: string | undefined;
  /** Shared secret between proxy and control plane; generated when both run in one process. */
  dataPlaneToken: string;
  logLevel: string;
  /** Console sessions last this long. */
  sessionTtlSeconds: number;
  /** SECRETS_KEY: 32-byte AES-256-GCM key sealing stored secrets (SSO client secrets); see docs/sso.md. */
  secretsKey: Buffer | undefined;
  /**
   * SSO_ALLOW_PRIVATE_ISSUERS: SSO may reach identity providers on loopback,
   * private, link-local or unique-local addresses, and over plain http
   * (off by default: an admin-set issuer must not reach the internal network).
   */
  ssoAllowPrivateIssuers: boolean;
  /** Data-plane tuning (docs/proxy.md). */
  proxy: ProxySettings;
  /** Operations (docs/operations.md). */
  ops: OpsSettings;
  /** Money alert webhooks (docs/console.md). */
  alerts: AlertSettings;
  /** Abuse limits of the control plane (docs/security.md). */
  limits: LimitSettings;
}

export interface AlertSettings {
  /** ALERTS_ALLOW_PRIVATE_URLS: webhook URLs may be http and reach loopback or private addresses (on-premises receivers, tests). */
  allowPrivateUrls: boolean;
  /** How often the delivery loop looks for due deliveries. */
  pollMs: number;
  /** First retry after this long, doubling per failed attempt up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** One delivery attempt may take this long (connect to the end of the answer's headers). */
  timeoutMs: number;
}

export interface LimitSettings {
  /** SCIM_SEARCH_TIMEOUT_MS: a SCIM search's statement time limit on PostgreSQL. */
  scimSearchTimeoutMs: number;
  /** SCIM_RATE_LIMIT_PER_MINUTE: SCIM requests per organization (per control-plane replica). */
  scimPerMinute: number;
  /** AUTH_RATE_LIMIT_PER_IP_PER_MINUTE: SSO login starts and session exchanges per client address. */
  authPerIpPerMinute: number;
  /** AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE: SSO login starts per organization. */
  authPerOrgPerMinute: number;
}

export interface OpsSettings {
  /** METRICS_ENABLED: count and time every request (default on). */
  metricsEnabled: boolean;
  /** Where `GET /metrics` is served: its own listener, loopback by default, apart from the public ports. */
  metricsHost: string;
  metricsPort: number;
  /** Whether METRICS_PORT was given: only then is a port already taken fatal. */
  metricsPortSet: boolean;
  /** When set, `/metrics` also wants `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** ACCESS_LOG: one `info` line per edge request (default on). */
  accessLog: boolean;
  /** On SIGTERM, calls and streams in flight get this long to finish. */
  shutdownGraceMs: number;
  /** OTLP/HTTP traces endpoint (…/v1/traces); undefined: tracing is off. */
  tracesEndpoint: string | undefined;
  /** OTEL_SERVICE_NAME, else tollgate-<half>. */
  serviceName: string | undefined;
}

export interface ProxySettings {
  maxBodyBytes: number;
  /**
   * The least output worth forwarding a call for: a call whose worst case
   * does not fit what is left of its key's budget or workspace's balance is
   * sent with its output ceiling lowered to what fits, never below this.
   */
  minOutputTokens: number;
  /** Bodies this large or larger are parsed, checked and translated in a worker thread, off the event loop. */
  offloadBodyBytes: number;
  /** Worker threads for that work. */
  bodyWorkers: number;
  keyCacheSize: number;
  /** A cached key answer is used without asking the control plane for this long. */
  keyFreshMs: number;
  /** Unknown keys are remembered as unknown for this long. */
  keyNegativeMs: number;
  /** With the control plane unreachable, a key known good keeps working this long after its last confirmation. */
  keyStaleMs: number;
  /** Backstop poll of the change feed version, behind push invalidation. */
  versionPollMs: number;
  upstreamConnectTimeoutMs: number;
  upstreamHeadersTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  /** A streamed call to an alias with another deployment or fallback moves on when no answer head came this fast. */
  upstreamTtfbMs: number;
  /** Failures in a row that open a deployment's circuit (it is skipped until a probe succeeds). */
  deploymentFailures: number;
  /** How long an open circuit keeps a deployment out of rotation before one probe call is let through. */
  deploymentCooldownMs: number;
  /** A hold left by a dead proxy is released after this long. */
  holdTtlSeconds: number;
  /** Prefix of every Redis key the proxy writes. */
  redisPrefix: string;
  /** The proxy's own files (the settlement outbox); one directory per proxy process. */
  dataDir: string;
  /** The longest wait between retries of a usage report that failed; retries never stop. */
  settleRetryMaxMs: number;
  /** Settlements waiting for the control plane at which new calls get 503 instead of being served unbilled. */
  outboxMaxRecords: number;
  /** After Redis lost its data, holds wait this long for every proxy to put its live holds back. */
  holdFenceMs: number;
  /** A call whose client left is read on, unrelayed, for at most this long to learn what the provider bills. */
  abandonedReadMs: number;
  /** Abandoned calls read on at once per proxy; one more is cut at once and billed its hold. */
  abandonedReadsMax: number;
  /** Whether a Responses call passed through may keep its response at the provider (`store`); off: the proxy sends `store: false`. */
  responsesStore: boolean;
  /**
   * A call whose body refers to input it does not carry (a previous
   * response, a conversation, a file or image URL, a file id, a stored
   * prompt): held at its model's context window, or refused with 400 when off.
   */
  referencedInput: boolean;
  /** How long the workspace a response id was issued to is remembered (previous_response_id is refused once forgotten). */
  responseIdTtlSeconds: number;
  /** Response ids remembered per proxy in memory (the oldest go first). */
  responseIdsMax: number;
  /** Codex's WebSocket transport on `/v1/responses`; off, an upgrade is answered 426. */
  responsesWebSocket: boolean;
  /** A socket closes (between calls) once it is this old… */
  webSocketLifetimeMs: number;
  /** …or once it has sat this long without a frame. */
  webSocketIdleMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export type ConfigMode = 'all' | 'control-plane' | 'proxy' | 'cli';

/** Parses the environment once; every problem is reported together. */
export function loadConfig(env: NodeJS.ProcessEnv, mode: ConfigMode = 'all'): Config {
  const problems: string[] = [];

  const port = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      problems.push(`${name}: "${raw}" is not a port number (0-65535)`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string | undefined, protocols: string[]): string | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) {
        problems.push(`${name}: protocol must be one of ${protocols.join(', ')} (got ${u.protocol})`);
      }
    } catch {
      problems.push(`${name}: "${redactUrl(raw)}" is not a URL`);
    }
    return raw.replace(/\/+$/, '');
  };
  const positiveInt = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) {
      problems.push(`${name}: "${raw}" is not a positive integer`);
      return fallback;
    }
    return n;
  };

  const controlPlanePort = port('CONTROL_PLANE_PORT', 8080);
  const proxyPort = port('PROXY_PORT', 8081);
  const databaseUrl = url('DATABASE_URL', undefined, ['postgres:', 'postgresql:']);
  const redisUrl = url('REDIS_URL', undefined, ['redis:', 'rediss:']);
  const publicBaseUrl = url('PUBLIC_BASE_URL', `http://localhost:${controlPlanePort}`, ['http:', 'https:'])!;
  const edgeBaseUrl = url('EDGE_BASE_URL', `http://localhost:${proxyPort}`, ['http:', 'https:'])!;
  const controlPlaneUrl = url('CONTROL_PLANE_URL', undefined, ['http:', 'https:']);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`);

  let dataPlaneToken = env.DATA_PLANE_TOKEN ?? '';
  if (dataPlaneToken && dataPlaneToken.length < 32) {
    problems.push('DATA_PLANE_TOKEN: must be at least 32 characters');
  }
  if (!dataPlaneToken) {
    if (mode === 'proxy' || mode === 'control-plane') {
      problems.push(`DATA_PLANE_TOKEN: required when the ${mode} runs alone (the shared secret between the halves)`);
    }
    dataPlaneToken = randomBytes(32).toString('base64url');
  }
  if (mode === 'proxy' && !controlPlaneUrl) {
    problems.push('CONTROL_PLANE_URL: required when the proxy runs alone');
  }

  const modelsFile = resolve(env.MODELS_FILE || DEFAULT_MODELS_FILE);
  const { catalog, problems: modelProblems } = loadModelCatalog(modelsFile, env);
  problems.push(...modelProblems);

  const flag = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'off', 'no'].includes(raw)) return false;
    problems.push(`${name}: "${env[name]}" is not on/off (true/false, 1/0)`);
    return fallback;
  };
  const sessionTtlSeconds = positiveInt('SESSION_TTL_SECONDS', 12 * 3600);
  const proxy: ProxySettings = {
    maxBodyBytes: positiveInt('PROXY_MAX_BODY_BYTES', 10 * 1024 * 1024),
    minOutputTokens: positiveInt('PROXY_MIN_OUTPUT_TOKENS', 256),
    offloadBodyBytes: positiveInt('PROXY_OFFLOAD_BODY_BYTES', 64 * 1024),
    bodyWorkers: positiveInt('PROXY_BODY_WORKERS', Math.max(1, Math.min(4, availableParallelism() - 1))),
    keyCacheSize: positiveInt('PROXY_KEY_CACHE_SIZE', 10_000),
    keyFreshMs: positiveInt('PROXY_KEY_FRESH_MS', 60_000),
    keyNegativeMs: positiveInt('PROXY_KEY_NEGATIVE_MS', 2_000),
    keyStaleMs: positiveInt('PROXY_KEY_STALE_MS', 15 * 60_000),
    versionPollMs: positiveInt('PROXY_VERSION_POLL_MS', 1_000),
    upstreamConnectTimeoutMs: positiveInt('PROXY_UPSTREAM_CONNECT_TIMEOUT_MS', 5_000),
    upstreamHeadersTimeoutMs: positiveInt('PROXY_UPSTREAM_HEADERS_TIMEOUT_MS', 300_000),
    upstreamIdleTimeoutMs: positiveInt('PROXY_UPSTREAM_IDLE_TIMEOUT_MS', 120_000),
    upstreamTtfbMs: positiveInt('PROXY_UPSTREAM_TTFB_MS', 30_000),
    deploymentFailures: positiveInt('PROXY_DEPLOYMENT_FAILURES', 3),
    deploymentCooldownMs: positiveInt('PROXY_DEPLOYMENT_COOLDOWN_MS', 30_000),
    holdTtlSeconds: positiveInt('PROXY_HOLD_TTL_SECONDS', 900),
    redisPrefix: env.PROXY_REDIS_PREFIX || 'tollgate',
    dataDir: resolve(env.PROXY_DATA_DIR || join(env.DATA_DIR || './data', 'proxy')),
    settleRetryMaxMs: positiveInt('PROXY_SETTLE_RETRY_MAX_MS', 30_000),
    outboxMaxRecords: positiveInt('PROXY_OUTBOX_MAX_RECORDS', 100_000),
    holdFenceMs: positiveInt('PROXY_HOLD_FENCE_MS', 3_000),
    abandonedReadMs: positiveInt('PROXY_ABANDONED_READ_MS', 300_000),
    abandonedReadsMax: positiveInt('PROXY_ABANDONED_READS_MAX', 256),
    responsesStore: flag('PROXY_RESPONSES_STORE', false),
    referencedInput: flag('PROXY_REFERENCED_INPUT', true),
    // OpenAI keeps a stored response 30 days.
    responseIdTtlSeconds: positiveInt('PROXY_RESPONSE_ID_TTL_SECONDS', 30 * 24 * 3600),
    responseIdsMax: positiveInt('PROXY_RESPONSE_IDS_MAX', 100_000),
    responsesWebSocket: flag('PROXY_RESPONSES_WEBSOCKET', true),
    // Codex's own bound on a Responses WebSocket is 60 minutes; its stream idle timeout is 5 minutes.
    webSocketLifetimeMs: positiveInt('PROXY_WEBSOCKET_LIFETIME_SECONDS', 3600) * 1000,
    webSocketIdleMs: positiveInt('PROXY_WEBSOCKET_IDLE_SECONDS', 300) * 1000,
  };
  // An idle hold account in Redis lapses after twice the hold TTL; a key served
  // from the stale window must not carry a snapshot older than that (docs/proxy.md).
  if (proxy.holdTtlSeconds * 2000 <= proxy.keyStaleMs) {
    problems.push(
      `PROXY_HOLD_TTL_SECONDS: must be more than half the stale window PROXY_KEY_STALE_MS (${proxy.holdTtlSeconds} s against ${proxy.keyStaleMs / 1000} s)`,
    );
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) problems.push('METRICS_TOKEN: must be at least 16 characters');
  const ops: OpsSettings = {
    metricsEnabled: flag('METRICS_ENABLED', true),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    // Apart per half, so both can run on one host with the defaults.
    metricsPort: port('METRICS_PORT', mode === 'control-plane' ? 9465 : 9464),
    metricsPortSet: Boolean(env.METRICS_PORT),
    metricsToken,
    accessLog: flag('ACCESS_LOG', true),
    shutdownGraceMs: positiveInt('SHUTDOWN_GRACE_SECONDS', 25) * 1000,
    tracesEndpoint: tracesEndpoint(env, url),
    serviceName: env.OTEL_SERVICE_NAME || undefined,
  };

  const alerts: AlertSettings = {
    allowPrivateUrls: flag('ALERTS_ALLOW_PRIVATE_URLS', false),
    pollMs: positiveInt('ALERTS_POLL_MS', 1_000),
    retryBaseMs: positiveInt('ALERTS_RETRY_BASE_MS', 10_000),
    retryMaxMs: positiveInt('ALERTS_RETRY_MAX_MS', 3_600_000),
    timeoutMs: positiveInt('ALERTS_TIMEOUT_MS', 10_000),
  };
  const limits: LimitSettings = {
    scimSearchTimeoutMs: positiveInt('SCIM_SEARCH_TIMEOUT_MS', 5_000),
    scimPerMinute: positiveInt('SCIM_RATE_LIMIT_PER_MINUTE', 1_200),
    authPerIpPerMinute: positiveInt('AUTH_RATE_LIMIT_PER_IP_PER_MINUTE', 30),
    authPerOrgPerMinute: positiveInt('AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE', 300),
  };

  const secretsKey = parseSecretsKey(env.SECRETS_KEY);
  const ssoAllowPrivateIssuers = flag('SSO_ALLOW_PRIVATE_ISSUERS', false);
  if (secretsKey === null) problems.push('SECRETS_KEY: must be 32 bytes written as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');

  if (problems.length) throw new ConfigError(problems);
  return {
    controlPlanePort,
    proxyPort,
    host: env.HOST || '0.0.0.0',
    dataDir: resolve(env.DATA_DIR || './data'),
    databaseUrl,
    redisUrl,
    publicBaseUrl,
    edgeBaseUrl,
    modelsFile,
    models: catalog!,
    controlPlaneUrl,
    dataPlaneToken,
    logLevel,
    sessionTtlSeconds,
    secretsKey: secretsKey ?? undefined,
    ssoAllowPrivateIssuers,
    proxy,
    ops,
    alerts,
    limits,
  };
}

/**
 * The standard OpenTelemetry variables: the traces endpoint as given, or the
 * base endpoint plus /v1/traces (OTLP/HTTP); none, or OTEL_SDK_DISABLED /
 * OTEL_TRACES_EXPORTER=none, leaves tracing off.
 */
function tracesEndpoint(
  env: NodeJS.ProcessEnv,
  url: (name: string, fallback: string | undefined, protocols: string[]) => string | undefined,
): string | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const full = url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', undefined, ['http:', 'https:']);
  if (full) return full;
  const base = url('OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http:', 'https:']);
  return base ? `${base}/v1/traces` : undefined;
}

/** undefined when unset, null when set but not a 32-byte key in hex or base64(url). */
export function parseSecretsKey(raw: string | undefined): Buffer | undefined | null {
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return null;
  const key = Buffer.from(text, 'base64');
  return key.length === 32 ? key : null;
}

/** Strips credentials from a URL before it is printed. */
export function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^@/]*@/, '//***@');
}
