import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { AlertSettings, Config, LimitSettings, OpsSettings, ProxySettings } from './config-types.js';
import { atLeast, flag, oneOf, port, positiveInt, secretsKey, text, url, type SettingTable } from './config-parsers.js';
import { packagePath } from './package-root.js';

/**
 * Every environment variable the servers read, as `{env, parse, default,
 * doc}`; shared/config.ts reads the tables and adds the rules that tie
 * several variables together. The README's and docs/*.md's variable tables
 * are checked against these (test/unit/shared/config-docs.test.ts).
 */

export const DEFAULT_MODELS_FILE = packagePath('models.example.json');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const WEB = ['http:', 'https:'];

export const PORTS: SettingTable<Pick<Config, 'controlPlanePort' | 'proxyPort'>> = {
  controlPlanePort: { env: 'CONTROL_PLANE_PORT', parse: port, default: 8080, doc: 'control plane port' },
  proxyPort: { env: 'PROXY_PORT', parse: port, default: 8081, doc: 'proxy port' },
};

/** Read apart from `models` (loaded from `modelsFile`) and with the data-plane token generated when unset. */
export type CoreSettings = Omit<Config, 'controlPlanePort' | 'proxyPort' | 'models' | 'proxy' | 'ops' | 'alerts' | 'limits' | 'dataPlaneToken'> & {
  dataPlaneToken: string | undefined;
};

export const CORE: SettingTable<CoreSettings> = {
  host: { env: 'HOST', parse: text, default: '0.0.0.0', doc: 'interface both listen on' },
  dataDir: {
    env: 'DATA_DIR',
    parse: (raw) => ({ ok: true, value: resolve(raw) }),
    default: () => resolve('./data'),
    doc: 'embedded store directory',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    parse: url(['postgres:', 'postgresql:']),
    default: undefined,
    doc: 'use PostgreSQL instead of the embedded store',
  },
  redisUrl: { env: 'REDIS_URL', parse: url(['redis:', 'rediss:']), default: undefined, doc: 'shared holds and rate-limit counters' },
  publicBaseUrl: {
    env: 'PUBLIC_BASE_URL',
    parse: url(WEB),
    default: (ctx) => `http://localhost:${ctx.controlPlanePort}`,
    doc: 'the control plane as clients see it',
  },
  edgeBaseUrl: { env: 'EDGE_BASE_URL', parse: url(WEB), default: (ctx) => `http://localhost:${ctx.proxyPort}`, doc: 'the proxy as clients see it' },
  modelsFile: {
    env: 'MODELS_FILE',
    parse: (raw) => ({ ok: true, value: resolve(raw) }),
    default: () => resolve(DEFAULT_MODELS_FILE),
    doc: 'providers and model aliases (JSON)',
  },
  controlPlaneUrl: { env: 'CONTROL_PLANE_URL', parse: url(WEB), default: undefined, doc: 'where a standalone proxy reaches the control plane' },
  dataPlaneToken: { env: 'DATA_PLANE_TOKEN', parse: atLeast(32), default: undefined, doc: 'shared secret between proxy and control plane' },
  logLevel: { env: 'LOG_LEVEL', parse: oneOf(LOG_LEVELS), default: 'info', doc: 'pino level' },
  sessionTtlSeconds: { env: 'SESSION_TTL_SECONDS', parse: positiveInt, default: 12 * 3600, doc: 'console session lifetime' },
  secretsKey: { env: 'SECRETS_KEY', parse: secretsKey, default: undefined, doc: 'key sealing stored secrets' },
  ssoAllowPrivateIssuers: {
    env: 'SSO_ALLOW_PRIVATE_ISSUERS',
    parse: flag,
    default: false,
    doc: 'SSO may reach identity providers on private addresses and over http',
  },
};

const positive = (env: string, fallback: number, doc: string) => ({ env, parse: positiveInt, default: fallback, doc });

/** ProxySettings as read: the WebSocket windows in seconds (shared/config.ts gives them in ms). */
export type ProxyTable = Omit<ProxySettings, 'webSocketLifetimeMs' | 'webSocketIdleMs'> & {
  webSocketLifetimeSeconds: number;
  webSocketIdleSeconds: number;
};

export const PROXY: SettingTable<ProxyTable> = {
  maxBodyBytes: positive('PROXY_MAX_BODY_BYTES', 10 * 1024 * 1024, 'request body limit'),
  minOutputTokens: positive('PROXY_MIN_OUTPUT_TOKENS', 256, 'the least output a lowered call is sent with'),
  offloadBodyBytes: positive('PROXY_OFFLOAD_BODY_BYTES', 64 * 1024, 'bodies this large are worked in worker threads'),
  bodyWorkers: {
    env: 'PROXY_BODY_WORKERS',
    parse: positiveInt,
    default: () => Math.max(1, Math.min(4, availableParallelism() - 1)),
    doc: 'worker threads for body work',
  },
  keyCacheSize: positive('PROXY_KEY_CACHE_SIZE', 10_000, 'key cache entries'),
  keyFreshMs: positive('PROXY_KEY_FRESH_MS', 60_000, 'a key answer is used without asking again this long'),
  keyNegativeMs: positive('PROXY_KEY_NEGATIVE_MS', 2_000, 'an unknown key is remembered this long'),
  keyStaleMs: positive('PROXY_KEY_STALE_MS', 15 * 60_000, 'known-good window while the control plane is unreachable'),
  versionPollMs: positive('PROXY_VERSION_POLL_MS', 1_000, 'change-feed poll behind the push stream'),
  upstreamConnectTimeoutMs: positive('PROXY_UPSTREAM_CONNECT_TIMEOUT_MS', 5_000, 'connecting to the provider'),
  upstreamHeadersTimeoutMs: positive('PROXY_UPSTREAM_HEADERS_TIMEOUT_MS', 300_000, "until the provider's response headers"),
  upstreamIdleTimeoutMs: positive('PROXY_UPSTREAM_IDLE_TIMEOUT_MS', 120_000, 'silence between body chunks'),
  upstreamTtfbMs: positive('PROXY_UPSTREAM_TTFB_MS', 30_000, 'a streamed call moves on to another deployment without an answer head this fast'),
  deploymentFailures: positive('PROXY_DEPLOYMENT_FAILURES', 3, "failures in a row that open a deployment's circuit"),
  deploymentCooldownMs: positive('PROXY_DEPLOYMENT_COOLDOWN_MS', 30_000, 'how long an open circuit keeps a deployment out'),
  holdTtlSeconds: positive('PROXY_HOLD_TTL_SECONDS', 900, 'a hold left by a dead proxy is released after this long'),
  redisPrefix: { env: 'PROXY_REDIS_PREFIX', parse: text, default: 'tollgate', doc: 'prefix of every Redis key the proxy writes' },
  dataDir: {
    env: 'PROXY_DATA_DIR',
    parse: (raw) => ({ ok: true, value: resolve(raw) }),
    default: (ctx) => resolve(join(ctx.env.DATA_DIR || './data', 'proxy')),
    doc: 'the settlement outbox',
  },
  settleRetryMaxMs: positive('PROXY_SETTLE_RETRY_MAX_MS', 30_000, 'the longest wait between retries of a usage report'),
  outboxMaxRecords: positive('PROXY_OUTBOX_MAX_RECORDS', 100_000, 'waiting settlements at which new calls get 503'),
  holdFenceMs: positive('PROXY_HOLD_FENCE_MS', 3_000, 'after Redis lost its data, no hold is admitted this long'),
  abandonedReadMs: positive('PROXY_ABANDONED_READ_MS', 300_000, 'a call whose client left is read on this long'),
  abandonedReadsMax: positive('PROXY_ABANDONED_READS_MAX', 256, 'such reads at once per proxy'),
  responsesStore: { env: 'PROXY_RESPONSES_STORE', parse: flag, default: false, doc: 'a Responses provider may keep responses' },
  referencedInput: { env: 'PROXY_REFERENCED_INPUT', parse: flag, default: true, doc: 'hold calls that refer to input they do not carry' },
  // OpenAI keeps a stored response 30 days.
  responseIdTtlSeconds: positive('PROXY_RESPONSE_ID_TTL_SECONDS', 30 * 24 * 3600, 'how long the workspace of a response id is remembered'),
  responseIdsMax: positive('PROXY_RESPONSE_IDS_MAX', 100_000, "response ids in each proxy's memory"),
  http2Cleartext: { env: 'PROXY_HTTP2_CLEARTEXT', parse: flag, default: true, doc: 'HTTP/2 without TLS (h2c) beside HTTP/1.1 on the proxy port' },
  responsesWebSocket: { env: 'PROXY_RESPONSES_WEBSOCKET', parse: flag, default: true, doc: "Codex's Responses WebSocket; off: upgrades get 426" },
  // Codex's own bound on a Responses WebSocket is 60 minutes; its stream idle timeout is 5 minutes.
  webSocketLifetimeSeconds: positive('PROXY_WEBSOCKET_LIFETIME_SECONDS', 3600, 'a Responses WebSocket is closed (between calls) once this old'),
  webSocketIdleSeconds: positive('PROXY_WEBSOCKET_IDLE_SECONDS', 300, 'a Responses WebSocket is closed after this long without a frame'),
};

/** OpsSettings as read; shared/config.ts derives the rest (the grace in ms, whether a metrics port was given, the traces URL). */
export type OpsTable = Omit<OpsSettings, 'shutdownGraceMs' | 'metricsPortSet' | 'tracesEndpoint'> & { shutdownGraceSeconds: number };

export const OPS: SettingTable<OpsTable> = {
  metricsEnabled: { env: 'METRICS_ENABLED', parse: flag, default: true, doc: 'count and time every request' },
  metricsHost: { env: 'METRICS_HOST', parse: text, default: '127.0.0.1', doc: 'interface of the metrics listener' },
  // Apart per half, so both can run on one host with the defaults.
  metricsPort: {
    env: 'METRICS_PORT',
    parse: port,
    default: (ctx) => (ctx.mode === 'control-plane' ? 9465 : 9464),
    doc: 'port of the metrics listener',
  },
  metricsToken: { env: 'METRICS_TOKEN', parse: atLeast(16), default: undefined, doc: 'bearer token a scrape must send' },
  accessLog: { env: 'ACCESS_LOG', parse: flag, default: true, doc: 'one info line per edge request' },
  shutdownGraceSeconds: positive('SHUTDOWN_GRACE_SECONDS', 25, 'on SIGTERM, how long requests in flight may take'),
  serviceName: { env: 'OTEL_SERVICE_NAME', parse: text, default: undefined, doc: 'service.name of the spans' },
};

/** The standard OpenTelemetry variables, as given; shared/config.ts turns them into one traces URL. */
export interface OtelTable {
  tracesEndpoint: string | undefined;
  endpoint: string | undefined;
  sdkDisabled: string | undefined;
  tracesExporter: string | undefined;
}

export const OTEL: SettingTable<OtelTable> = {
  tracesEndpoint: { env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', parse: text, default: undefined, doc: 'the full traces URL' },
  endpoint: { env: 'OTEL_EXPORTER_OTLP_ENDPOINT', parse: text, default: undefined, doc: 'OTLP/HTTP collector base URL' },
  sdkDisabled: { env: 'OTEL_SDK_DISABLED', parse: text, default: undefined, doc: '`true` turns tracing off' },
  tracesExporter: { env: 'OTEL_TRACES_EXPORTER', parse: text, default: undefined, doc: '`none` turns tracing off' },
};

export const ALERTS: SettingTable<AlertSettings> = {
  allowPrivateUrls: { env: 'ALERTS_ALLOW_PRIVATE_URLS', parse: flag, default: false, doc: 'webhooks may use http and private addresses' },
  pollMs: positive('ALERTS_POLL_MS', 1_000, 'how often due deliveries are looked for'),
  retryBaseMs: positive('ALERTS_RETRY_BASE_MS', 10_000, "the first retry's wait, doubling per attempt"),
  retryMaxMs: positive('ALERTS_RETRY_MAX_MS', 3_600_000, "the retry wait's cap"),
  timeoutMs: positive('ALERTS_TIMEOUT_MS', 10_000, "one attempt's time limit"),
};

export const LIMITS: SettingTable<LimitSettings> = {
  scimSearchTimeoutMs: positive('SCIM_SEARCH_TIMEOUT_MS', 5_000, "a SCIM search's statement time limit"),
  scimPerMinute: positive('SCIM_RATE_LIMIT_PER_MINUTE', 1_200, 'SCIM requests per organization'),
  authPerIpPerMinute: positive('AUTH_RATE_LIMIT_PER_IP_PER_MINUTE', 30, 'SSO login starts and session exchanges per client address'),
  authPerOrgPerMinute: positive('AUTH_RATE_LIMIT_PER_ORG_PER_MINUTE', 300, 'SSO login starts per organization'),
};

/** Every table, for the docs check. */
export const ALL_TABLES = [PORTS, CORE, PROXY, OPS, OTEL, ALERTS, LIMITS] as const;
