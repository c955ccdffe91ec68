import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModelCatalog, type ModelCatalog } from './models.js';

export const DEFAULT_MODELS_FILE = fileURLToPath(new URL('../models.example.json', import.meta.url));

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

  const sessionTtlSeconds = positiveInt('SESSION_TTL_SECONDS', 12 * 3600);

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
  };
}

/** Strips credentials from a URL before it is printed. */
export function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^@/]*@/, '//***@');
}
