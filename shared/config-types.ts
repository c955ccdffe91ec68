import type { ModelCatalog } from './models.js';

/** What the environment configures, once parsed (shared/config.ts reads it; shared/config-table.ts lists the variables). */
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
  /**
   * Cleartext HTTP/2 with prior knowledge beside HTTP/1.1 on the proxy's port
   * (the AWS SDK's Bedrock runtime client speaks nothing else to `http://`);
   * off, the port speaks HTTP/1.1 alone.
   */
  http2Cleartext: boolean;
  /** Codex's WebSocket transport on `/v1/responses`; off, an upgrade is answered 426. */
  responsesWebSocket: boolean;
  /** A socket closes (between calls) once it is this old… */
  webSocketLifetimeMs: number;
  /** …or once it has sat this long without a frame. */
  webSocketIdleMs: number;
}

export type ConfigMode = 'all' | 'control-plane' | 'proxy' | 'cli';
