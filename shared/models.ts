import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The operator-owned catalog of providers and model aliases. A provider names
 * the wire formats it speaks by giving one base URL or both; a call in a
 * format its provider lacks is translated by the proxy.
 */
/** `authorization` carries `Bearer <key>`; the others carry the bare key. */
const authHeaderSchema = z.enum(['authorization', 'x-api-key', 'api-key']);
export type AuthHeader = z.infer<typeof authHeaderSchema>;

const providerSchema = z
  .object({
    chat_completions_base_url: z.url({ protocol: /^https?$/ }).optional(),
    messages_base_url: z.url({ protocol: /^https?$/ }).optional(),
    api_key_env: z.string().min(1),
    /** Overrides the header each format's provider key is sent in (Azure OpenAI wants `api-key`). */
    chat_completions_auth_header: authHeaderSchema.optional(),
    messages_auth_header: authHeaderSchema.optional(),
    /** Sent to the provider on every call (e.g. an API version a gateway in front of it wants). */
    extra_headers: z.record(z.string().regex(/^[a-z0-9-]+$/, 'lowercase header names'), z.string()).optional(),
  })
  .strict()
  .refine((p) => p.chat_completions_base_url !== undefined || p.messages_base_url !== undefined, {
    message: 'a provider needs chat_completions_base_url, messages_base_url, or both',
  });

const modelSchema = z
  .object({
    alias: z.string().min(1),
    provider: z.string().min(1),
    upstream_model: z.string().min(1),
    input_usd_per_mtok: z.number().nonnegative(),
    output_usd_per_mtok: z.number().nonnegative(),
    max_output_tokens: z.number().int().positive(),
  })
  .strict();

const catalogSchema = z
  .object({
    alias_prefix: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes'),
    providers: z.record(z.string(), providerSchema),
    models: z.array(modelSchema).min(1),
  })
  .strict();

export type ProviderConfig = z.infer<typeof providerSchema> & { name: string; api_key: string | undefined };
export type ModelConfig = z.infer<typeof modelSchema>;

export interface ModelCatalog {
  aliasPrefix: string;
  providers: Map<string, ProviderConfig>;
  models: Map<string, ModelConfig>;
}

/** Parses a catalog; returns every problem found rather than the first. */
export function parseModelCatalog(raw: unknown, env: NodeJS.ProcessEnv): { catalog?: ModelCatalog; problems: string[] } {
  const parsed = catalogSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((i) => `models file: ${i.path.join('.') || '(root)'}: ${i.message}`),
    };
  }
  const problems: string[] = [];
  const { alias_prefix, providers, models } = parsed.data;
  const providerMap = new Map<string, ProviderConfig>();
  for (const [name, p] of Object.entries(providers)) {
    providerMap.set(name, { ...p, name, api_key: env[p.api_key_env] });
  }
  const modelMap = new Map<string, ModelConfig>();
  models.forEach((m, i) => {
    if (!m.alias.startsWith(`${alias_prefix}/`) || m.alias.length <= alias_prefix.length + 1) {
      problems.push(`models file: models.${i}.alias: "${m.alias}" must start with "${alias_prefix}/"`);
    }
    if (!providerMap.has(m.provider)) {
      problems.push(`models file: models.${i}.provider: unknown provider "${m.provider}"`);
    }
    if (modelMap.has(m.alias)) problems.push(`models file: models.${i}.alias: duplicate alias "${m.alias}"`);
    modelMap.set(m.alias, m);
  });
  if (problems.length) return { problems };
  return { catalog: { aliasPrefix: alias_prefix, providers: providerMap, models: modelMap }, problems };
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
    return { problems: [`MODELS_FILE: ${path} is not valid JSON: ${(err as Error).message}`] };
  }
  return parseModelCatalog(raw, env);
}

/**
 * One line per provider whose key variable is unset. Such a provider gets its
 * calls with an empty key; a real one answers 401, which the proxy relays, and
 * that reads like a bad Tollgate key unless the operator was told at start.
 */
export function unsetProviderKeyWarnings(catalog: ModelCatalog): string[] {
  return [...catalog.providers.values()]
    .filter((p) => !p.api_key)
    .map((p) => {
      const aliases = [...catalog.models.values()].filter((m) => m.provider === p.name).map((m) => m.alias);
      return (
        `warning: ${p.api_key_env} is not set: provider "${p.name}" (${aliases.join(', ') || 'no models'}) gets calls without a provider key. ` +
        `A real provider refuses them with 401 (the provider's refusal, not Tollgate's); the stand-in from \`npm run fake-upstream\` accepts them.`
      );
    });
}
