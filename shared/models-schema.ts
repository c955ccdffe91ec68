import { isObject } from './json.js';
import { z } from 'zod';
import { WIRE_FORMAT_CONFIG_NAMES, type WireFormatConfigName } from './wire-formats.js';

/**
 * The shapes of one provider and one model entry of the models file. Each is
 * checked on its own so that one bad entry does not hide the problems of the
 * others; the checks across entries (aliases, references, fallbacks) live in
 * models-checks.ts.
 */

/** `authorization` carries `Bearer <key>`; the others carry the bare key. */
export const authHeaderSchema = z.enum(['authorization', 'x-api-key', 'api-key', 'x-goog-api-key']);

const baseUrl = z.url({ protocol: /^https?$/ });

/** Where a provider serves one wire format, and the header its key goes in there (each format has a default). */
const endpointSchema = z.object({ base_url: baseUrl, auth_header: authHeaderSchema.optional() }).strict();

/** `endpoints`, keyed by each format's config name. */
const endpointsSchema = z
  .object(
    Object.fromEntries(WIRE_FORMAT_CONFIG_NAMES.map((name) => [name, endpointSchema.optional()])) as Record<
      WireFormatConfigName,
      z.ZodOptional<typeof endpointSchema>
    >,
  )
  .strict();

/**
 * The older spelling of `endpoints`: `<format>_base_url` and
 * `<format>_auth_header` per format, read as the map (models.ts).
 */
const olderEndpointFields = Object.fromEntries(
  WIRE_FORMAT_CONFIG_NAMES.flatMap((name) => [
    [`${name}_base_url`, baseUrl.optional()],
    [`${name}_auth_header`, authHeaderSchema.optional()],
  ]),
) as Record<`${WireFormatConfigName}_base_url`, z.ZodOptional<typeof baseUrl>> &
  Record<`${WireFormatConfigName}_auth_header`, z.ZodOptional<typeof authHeaderSchema>>;

/** Names of environment variables, never their values: the models file holds no secret. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

/**
 * A provider that signs in to its cloud instead of sending a key:
 * - `kind: "vertex"` with `project` and `location`: Google Vertex AI,
 *   Anthropic's models at its rawPredict paths, OAuth tokens from Application
 *   Default Credentials; `endpoint_url` replaces
 *   `https://{location}-aiplatform.googleapis.com`;
 * - `azure_ad`: Azure OpenAI with Entra ID tokens (client secret,
 *   certificate or workload identity), `authority_url` replacing the login host.
 */
const cloudFields = {
  /** Unset for a provider reached by base URL and key; `bedrock`: Amazon Bedrock (docs/clouds/bedrock.md); `vertex`: Google Vertex AI (docs/clouds/vertex.md). */
  kind: z.enum(['bedrock', 'vertex']).optional(),
  /** A Bedrock provider's region: its host and what its requests are signed for. */
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'an AWS region such as us-east-1')
    .optional(),
  project: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/, 'a Google Cloud project id')
    .optional(),
  location: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'a Google Cloud location, e.g. us-east5 or global')
    .optional(),
  endpoint_url: baseUrl.optional(),
  azure_ad: z.object({ tenant_id_env: envName, client_id_env: envName, client_secret_env: envName.optional() }).strict().optional(),
  authority_url: z.url({ protocol: /^https$/ }).optional(),
};

/** What a provider's way of signing in asks of the rest of its entry. */
function cloudProblems(p: {
  kind?: 'bedrock' | 'vertex' | undefined;
  project?: string | undefined;
  location?: string | undefined;
  endpoint_url?: string | undefined;
  azure_ad?: object | undefined;
  authority_url?: string | undefined;
  api_key_env?: string | undefined;
}): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (p.kind === 'vertex') {
    if (p.project === undefined) problems.push({ path: 'project', message: 'a vertex provider needs project' });
    if (p.location === undefined) problems.push({ path: 'location', message: 'a vertex provider needs location' });
    if (p.api_key_env !== undefined)
      problems.push({ path: 'api_key_env', message: 'a vertex provider signs in with Application Default Credentials, not a key' });
    if (p.azure_ad !== undefined) problems.push({ path: 'azure_ad', message: 'a vertex provider cannot use azure_ad' });
  } else {
    for (const field of ['project', 'location', 'endpoint_url'] as const) {
      if (p[field] !== undefined)
        problems.push({ path: field, message: `${field} is for "kind": "vertex"${field === 'endpoint_url' ? ' or "bedrock"' : ''}` });
    }
    if (p.azure_ad !== undefined && p.api_key_env !== undefined)
      problems.push({ path: 'azure_ad', message: 'give azure_ad or api_key_env, not both' });
    if (p.azure_ad === undefined && p.api_key_env === undefined)
      problems.push({ path: 'api_key_env', message: 'a provider needs api_key_env (or azure_ad, or "kind": "vertex")' });
  }
  if (p.authority_url !== undefined && p.azure_ad === undefined) problems.push({ path: 'authority_url', message: 'authority_url is for azure_ad' });
  return problems;
}

export const providerSchema = z
  .object({
    /** Where it serves each format it speaks; a call in a format it lacks is translated. */
    endpoints: endpointsSchema.optional(),
    ...olderEndpointFields,
    /** The variable holding the provider's key; a provider signing in to its cloud (`kind`, `azure_ad`) has none. */
    api_key_env: z.string().min(1).optional(),
    ...cloudFields,
    /** Sent to the provider on every call (e.g. an API version a gateway in front of it wants). */
    extra_headers: z.record(z.string().regex(/^[a-z0-9-]+$/, 'lowercase header names'), z.string()).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.kind === 'bedrock') return bedrockIssues(p, ctx);
    if (p.region !== undefined) ctx.addIssue({ code: 'custom', path: ['region'], message: 'region is for "kind": "bedrock"' });
    const olderNames = p as Record<string, unknown>;
    for (const name of WIRE_FORMAT_CONFIG_NAMES) {
      const older = [`${name}_base_url`, `${name}_auth_header`].filter((f) => olderNames[f] !== undefined);
      if (p.endpoints?.[name] !== undefined && older.length > 0) {
        ctx.addIssue({ code: 'custom', path: [older[0]!], message: `give either endpoints.${name} or ${older.join(' and ')}, not both` });
      } else if (
        p.endpoints?.[name] === undefined &&
        olderNames[`${name}_auth_header`] !== undefined &&
        olderNames[`${name}_base_url`] === undefined
      ) {
        ctx.addIssue({ code: 'custom', path: [`${name}_auth_header`], message: `needs ${name}_base_url` });
      }
    }
    for (const problem of cloudProblems(p)) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
    // A vertex provider's endpoint is its project's, made from project and location (shared/models.ts).
    if (
      p.kind !== 'vertex' &&
      !WIRE_FORMAT_CONFIG_NAMES.some((name) => p.endpoints?.[name] !== undefined || olderNames[`${name}_base_url`] !== undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        message: `a provider needs at least one endpoint: endpoints.{${WIRE_FORMAT_CONFIG_NAMES.join(',')}} (or the older ${WIRE_FORMAT_CONFIG_NAMES.map((n) => `${n}_base_url`).join(', ')})`,
      });
    }
  });
export type ProviderEntry = z.infer<typeof providerSchema>;

/** A Bedrock provider has a region and no endpoints of its own: its host is the region's (or `endpoint_url`). */
function bedrockIssues(p: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (p.region === undefined) ctx.addIssue({ code: 'custom', path: ['region'], message: 'required for "kind": "bedrock" (e.g. "us-east-1")' });
  const endpointFields = ['endpoints', ...WIRE_FORMAT_CONFIG_NAMES.flatMap((n) => [`${n}_base_url`, `${n}_auth_header`])].filter(
    (f) => p[f] !== undefined,
  );
  for (const f of endpointFields)
    ctx.addIssue({ code: 'custom', path: [f], message: 'a Bedrock provider is reached at its region (or endpoint_url), not by base URLs' });
}

/**
 * Money is kept in integer micro-dollars so that a price like $0.1875 per
 * million tokens stays exact; a price with more than six decimals could not be
 * billed exactly, so it is refused rather than rounded behind the operator's back.
 */
export function usdToMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}
const price = z
  .number()
  .nonnegative()
  .refine((usd) => usdToMicros(usd) / 1_000_000 === usd, 'at most six decimals (a millionth of a dollar)');

const deploymentSchema = z
  .object({
    provider: z.string().min(1),
    upstream_model: z.string().min(1),
    weight: z.number().positive('weight must be more than 0').optional(),
  })
  .strict();

/**
 * A name a client sends (`claude-sonnet-4-6`, `claude-haiku-*`). A `*` only
 * at the end, since a name with one elsewhere would read as a pattern the
 * proxy does not match; a bare `*` would take every name, typos included.
 */
const clientNameSchema = z
  .string()
  .min(1)
  .refine((n) => !n.slice(0, -1).includes('*'), 'a `*` may only end the name')
  .refine((n) => n !== '*', 'a bare `*` would match every name: list the names or a prefix');

export const modelEntrySchema = z
  .object({
    alias: z.string().min(1),
    provider: z.string().min(1).optional(),
    upstream_model: z.string().min(1).optional(),
    deployments: z.array(deploymentSchema).min(1, 'deployments needs at least one entry').optional(),
    fallbacks: z.array(z.string().min(1)).optional(),
    reasoning: z.boolean().optional(),
    input_usd_per_mtok: price,
    output_usd_per_mtok: price,
    cache_read_usd_per_mtok: price.optional(),
    cache_write_usd_per_mtok: price.optional(),
    cache_write_1h_usd_per_mtok: price.optional(),
    web_search_usd_per_request: price.optional(),
    max_output_tokens: z.number().int().positive(),
    /** Its context window: what clients are told, and the hold of a call that refers to input it does not carry (docs/proxy.md). */
    max_input_tokens: z.number().int().positive().optional(),
    /** Names clients send that mean this alias; a trailing `*` matches every name that starts with what precedes it. */
    client_names: z.array(clientNameSchema).optional(),
  })
  .strict();
export type ModelEntry = z.infer<typeof modelEntrySchema>;

/**
 * How the entry says where it is served: exactly one of `provider` +
 * `upstream_model` or `deployments`, and weights on all deployments or none.
 * Read from the raw entry so these show up alongside the schema's findings.
 */
export function servingProblems(entry: Record<string, unknown>): string[] {
  const single = entry.provider !== undefined || entry.upstream_model !== undefined;
  const { deployments } = entry;
  if (deployments !== undefined && single) {
    return ['give either provider + upstream_model or deployments, not both'];
  }
  if (deployments === undefined) {
    if (!single) return ['needs provider + upstream_model, or deployments'];
    if (entry.provider === undefined) return ['upstream_model needs a provider'];
    if (entry.upstream_model === undefined) return ['provider needs an upstream_model'];
    return [];
  }
  if (!Array.isArray(deployments)) return [];
  const weighted = deployments.filter((d) => isObject(d) && d.weight !== undefined).length;
  if (weighted > 0 && weighted < deployments.length) {
    return ['deployments: give every deployment a weight or none (weighted and ordered deployments do not mix)'];
  }
  return [];
}

export const aliasPrefixSchema = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes');

export const topLevelSchema = z
  .object({
    alias_prefix: aliasPrefixSchema,
    providers: z.record(z.string(), z.unknown()),
    models: z.array(z.unknown()).min(1, 'at least one model'),
  })
  .strict();

/** zod's wording for a missing field ("expected number, received undefined") said plainly. */
export function issueMessage(message: string): string {
  return /received undefined$/.test(message) ? `required (${message.replace(/^Invalid input: /, '').replace(/, received undefined$/, '')})` : message;
}

/** Renders a zod issue's path the way the file reads: `deployments[0].weight`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}
