import { isObject } from './json.js';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { WIRE_FORMAT_FACTS, WIRE_FORMATS, type WireFormat } from './wire-formats.js';
import { crossCheckModels } from './models-checks.js';
import { bedrockOrigin } from './bedrock-endpoint.js';
import {
  aliasPrefixSchema,
  type authHeaderSchema,
  issueMessage,
  issuePath,
  type ModelEntry,
  modelEntrySchema,
  type ProviderEntry,
  providerSchema,
  servingProblems,
  topLevelSchema,
  usdToMicros,
} from './models-schema.js';

/**
 * The operator-owned catalog of providers and model aliases. A provider names
 * the wire formats it speaks by its endpoints (a base URL each); a call in a
 * format its provider lacks is translated by the proxy. A model is served by one or more
 * deployments (provider + upstream model), and may name fallback aliases.
 */
export type AuthHeader = z.infer<typeof authHeaderSchema>;

/** Where a provider serves one wire format; an absent `auth_header` means the format's default (proxy/wire/registry.ts). */
export interface ProviderEndpoint {
  base_url: string;
  auth_header: AuthHeader | undefined;
}

/** A provider entry with its endpoints read into one map by wire format, whichever spelling the file used. */
export type ProviderConfig = Pick<ProviderEntry, 'api_key_env' | 'extra_headers' | 'azure_ad' | 'authority_url'> & {
  name: string;
  api_key: string | undefined;
  endpoints: Partial<Record<WireFormat, ProviderEndpoint>>;
  /** Set for Amazon Bedrock: Claude through InvokeModel at `endpoints.messages` (the region's host), signed for `region` unless `api_key` is set. */
  bedrock?: { region: string };
  /**
   * Set on a Vertex AI provider, whose calls carry Google tokens: Anthropic's
   * models at rawPredict paths under its Messages endpoint, Google's own
   * (Gemini) under its Gemini endpoint (proxy/wire/vertex/publisher.ts says which).
   */
  vertex: { project: string; location: string } | undefined;
};

/** Vertex AI's host for a location (`global` has no regional prefix). */
function vertexHost(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** A Vertex provider's endpoints under its project and location: one per publisher, Anthropic's (Messages) and Google's (Gemini). */
function vertexEndpoints(entry: ProviderEntry): Partial<Record<WireFormat, ProviderEndpoint>> {
  const host = (entry.endpoint_url ?? vertexHost(entry.location!)).replace(/\/+$/, '');
  const publishers = `${host}/v1/projects/${entry.project!}/locations/${entry.location!}/publishers`;
  return {
    messages: { base_url: `${publishers}/anthropic/models`, auth_header: 'authorization' },
    gemini: { base_url: `${publishers}/google/models`, auth_header: 'authorization' },
  };
}

/** `endpoints.<name>` or the older `<name>_base_url` + `<name>_auth_header`, by wire format. */
export function providerEndpoints(entry: ProviderEntry): Partial<Record<WireFormat, ProviderEndpoint>> {
  const older = entry as unknown as Record<string, string | undefined>;
  const endpoints: Partial<Record<WireFormat, ProviderEndpoint>> = {};
  for (const format of WIRE_FORMATS) {
    const name = WIRE_FORMAT_FACTS[format].configName;
    const given = entry.endpoints?.[name];
    const base = given?.base_url ?? older[`${name}_base_url`];
    if (base !== undefined)
      endpoints[format] = { base_url: base, auth_header: (given ? given.auth_header : older[`${name}_auth_header`]) as AuthHeader | undefined };
  }
  return endpoints;
}

/** A parsed provider entry as the proxy reads it. */
export function providerFromEntry(name: string, entry: ProviderEntry, env: NodeJS.ProcessEnv): ProviderConfig {
  const api_key = entry.api_key_env === undefined ? undefined : env[entry.api_key_env];
  const common = {
    name,
    api_key_env: entry.api_key_env,
    extra_headers: entry.extra_headers,
    api_key,
    vertex: entry.kind === 'vertex' ? { project: entry.project!, location: entry.location! } : undefined,
    azure_ad: entry.azure_ad,
    authority_url: entry.authority_url,
  };
  if (entry.kind === 'bedrock') {
    const region = entry.region!;
    return {
      ...common,
      endpoints: { messages: { base_url: bedrockOrigin(region, entry.endpoint_url, env), auth_header: 'authorization' } },
      bedrock: { region },
    };
  }
  return { ...common, endpoints: entry.kind === 'vertex' ? vertexEndpoints(entry) : providerEndpoints(entry) };
}

/** One place a model is served. `weight` is set on all deployments of a model or on none. */
export interface Deployment {
  provider: string;
  upstream_model: string;
  weight: number | undefined;
}

/**
 * A model's prices in integer micro-dollars: per million tokens, or per
 * request for web search. `undefined` means the file does not give it; the
 * pricing code applies the default, so the catalog keeps "absent" visible.
 */
export interface ModelPrices {
  input: number;
  output: number;
  cache_read: number | undefined;
  cache_write: number | undefined;
  cache_write_1h: number | undefined;
  web_search_per_request: number | undefined;
}

export interface ModelConfig {
  alias: string;
  /** The first deployment's provider and upstream model: the primary. */
  provider: string;
  upstream_model: string;
  /** In the file's order; a single provider + upstream_model is one deployment. */
  deployments: Deployment[];
  /** Aliases tried in order when every deployment failed (already checked to exist and not to loop). */
  fallbacks: string[];
  /** The provider takes a reasoning control, so translation maps it rather than dropping it. */
  reasoning: boolean;
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  prices: ModelPrices;
  max_output_tokens: number;
  /** The context window the file gives, told to clients; undefined when it gives none (a referring call's hold then assumes DEFAULT_MAX_INPUT_TOKENS). */
  max_input_tokens?: number | undefined;
  /** Names clients send for this alias (client-names.ts resolves them). */
  client_names?: readonly string[];
}

/** The context window assumed of a model entry that gives none: the largest common one, so a referring call is never held short. */
export const DEFAULT_MAX_INPUT_TOKENS = 200_000;

export interface ModelCatalog {
  aliasPrefix: string;
  providers: Map<string, ProviderConfig>;
  models: Map<string, ModelConfig>;
}

const PREFIX = 'models file: ';

/**
 * Parses a catalog and returns every problem found in one round: the shape of
 * each entry and the checks across entries together, each naming the entry
 * (`model "tg/x"`, `provider "p"`) so the operator fixes them all at once.
 */
export function parseModelCatalog(raw: unknown, env: NodeJS.ProcessEnv): { catalog?: ModelCatalog; problems: string[] } {
  if (!isObject(raw)) return { problems: [`${PREFIX}must be an object with alias_prefix, providers and models`] };
  const problems: string[] = [];
  const top = topLevelSchema.safeParse(raw);
  if (!top.success) {
    for (const i of top.error.issues) problems.push(`${PREFIX}${withPath(i.path.length ? i.path : ['top level'], i.message)}`);
  }

  const rawProviders = isObject(raw.providers) ? raw.providers : {};
  const providers = new Map<string, ProviderConfig>();
  for (const [name, p] of Object.entries(rawProviders)) {
    const parsed = providerSchema.safeParse(p);
    if (parsed.success) providers.set(name, providerFromEntry(name, parsed.data, env));
    else for (const i of parsed.error.issues) problems.push(`${PREFIX}provider "${name}": ${withPath(i.path, i.message)}`);
  }

  const rawModels = Array.isArray(raw.models) ? raw.models : [];
  const prefix = aliasPrefixSchema.safeParse(raw.alias_prefix);
  const aliasPrefix = prefix.success ? prefix.data : undefined;
  const cross = crossCheckModels({ models: rawModels, aliasPrefix, providerNames: new Set(Object.keys(rawProviders)) });
  const entries: ModelEntry[] = [];
  rawModels.forEach((m, index) => {
    const label = isObject(m) && typeof m.alias === 'string' && m.alias ? `model "${m.alias}"` : `models[${index}]`;
    const own: string[] = [];
    if (!isObject(m)) {
      own.push('must be an object');
    } else {
      const parsed = modelEntrySchema.safeParse(m);
      if (parsed.success) entries.push(parsed.data);
      else own.push(...parsed.error.issues.map((i) => withPath(i.path, i.message)));
      own.push(...servingProblems(m));
    }
    own.push(...(cross.byIndex.get(index) ?? []));
    problems.push(...own.map((p) => `${PREFIX}${label}: ${p}`));
  });
  problems.push(...cross.shared.map((p) => `${PREFIX}${p}`));

  if (problems.length || !top.success) return { problems };
  const models = new Map(entries.map((e) => [e.alias, modelFromEntry(e)]));
  return { catalog: { aliasPrefix: top.data.alias_prefix, providers, models }, problems };
}

function withPath(path: readonly PropertyKey[], message: string): string {
  const where = issuePath(path);
  return where ? `${where}: ${issueMessage(message)}` : issueMessage(message);
}

/** The catalog's form of one (valid) model entry; also how tests and the bench build a model. */
export function modelFromEntry(e: ModelEntry): ModelConfig {
  const deployments: Deployment[] = e.deployments?.map((d) => ({ provider: d.provider, upstream_model: d.upstream_model, weight: d.weight })) ?? [
    { provider: e.provider ?? '', upstream_model: e.upstream_model ?? '', weight: undefined },
  ];
  const optional = (usd: number | undefined): number | undefined => (usd === undefined ? undefined : usdToMicros(usd));
  return {
    alias: e.alias,
    provider: deployments[0]!.provider,
    upstream_model: deployments[0]!.upstream_model,
    deployments,
    fallbacks: e.fallbacks ?? [],
    reasoning: e.reasoning ?? false,
    input_usd_per_mtok: e.input_usd_per_mtok,
    output_usd_per_mtok: e.output_usd_per_mtok,
    prices: {
      input: usdToMicros(e.input_usd_per_mtok),
      output: usdToMicros(e.output_usd_per_mtok),
      cache_read: optional(e.cache_read_usd_per_mtok),
      cache_write: optional(e.cache_write_usd_per_mtok),
      cache_write_1h: optional(e.cache_write_1h_usd_per_mtok),
      web_search_per_request: optional(e.web_search_usd_per_request),
    },
    max_output_tokens: e.max_output_tokens,
    max_input_tokens: e.max_input_tokens,
    client_names: e.client_names ?? [],
  };
}

export function loadModelCatalog(path: string, env: NodeJS.ProcessEnv): { catalog?: ModelCatalog; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { problems: [`MODELS_FILE: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`] };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { problems: [`MODELS_FILE: ${path} is not valid JSON: ${jsonErrorWithLine((err as Error).message, text)}`] };
  }
  return parseModelCatalog(raw, env);
}

/**
 * V8 names the line and column of a JSON syntax error; where it gives only
 * the character position (older engines), the line and column are worked out
 * here, since "position 155" sends the operator counting characters.
 */
export function jsonErrorWithLine(message: string, text: string): string {
  // A trailing comma is the usual slip, and V8 names it badly: an array's as an "Unexpected
  // token ']'" with a snippet and no position, an object's at the brace after it.
  const comma = trailingComma(text);
  if (comma !== undefined) return `a trailing comma at ${lineColumn(text, comma)} (JSON allows none before } or ])`;
  if (/line \d+ column \d+/.test(message)) return message;
  const at = /position (\d+)/.exec(message);
  if (!at) return message;
  return `${message} (${lineColumn(text, Number(at[1]))})`;
}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length} column ${before[before.length - 1]!.length + 1}`;
}

/** The offset of the first comma followed (past white space) by } or ], outside strings; undefined when there is none. */
function trailingComma(text: string): number | undefined {
  let inString = false;
  let comma: number | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',') comma = i;
    else if ((c === '}' || c === ']') && comma !== undefined) return comma;
    else if (!/\s/.test(c)) comma = undefined;
  }
  return undefined;
}

/**
 * One line per provider whose key variable is unset. Such a provider gets its
 * calls with an empty key; a real one answers 401, which the proxy relays, and
 * that reads like a bad Tollgate key unless the operator was told at start.
 */
export function unsetProviderKeyWarnings(catalog: ModelCatalog): string[] {
  return (
    [...catalog.providers.values()]
      // A cloud provider without an API key signs in with the cloud's credentials instead.
      .filter((p) => p.api_key_env !== undefined && !p.api_key)
      .map((p) => {
        const aliases = [...catalog.models.values()].filter((m) => m.deployments.some((d) => d.provider === p.name)).map((m) => m.alias);
        return (
          `warning: ${p.api_key_env!} is not set: provider "${p.name}" (${aliases.join(', ') || 'no models'}) gets calls without a provider key. ` +
          `A real provider refuses them with 401 (the provider's refusal, not Tollgate's); the stand-in from \`npm run fake-upstream\` accepts them.`
        );
      })
  );
}
