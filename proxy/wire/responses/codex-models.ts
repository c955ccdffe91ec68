import type { ListedModel } from '../../../shared/client-names.js';

/**
 * Codex's model catalog: what it fetches from a provider's `model_catalog_url`
 * (`GET …?client_version=0.171.0`, the key as a bearer token) and reads a
 * model's metadata from, `{ models: [ModelInfo] }`. A model it finds there is
 * no longer "Model metadata for … not found": Codex sizes its context and
 * compacts from `context_window` (here the alias's `max_input_tokens`), and
 * offers `apply_patch` as its free-form tool. Every field below is one Codex
 * 0.171 requires to accept an entry (a missing one makes it drop the whole
 * catalog), set to what a model behind Tollgate supports: no server-side tool
 * search (its hosted tools are not on every provider), no verbosity or
 * reasoning summaries, reasoning levels only where the entry says
 * `reasoning: true`. The catalog has no output-limit field; the alias's
 * `max_output_tokens` caps every call at the proxy instead.
 */

/**
 * `base_instructions` is the system prompt Codex sends with the model (an
 * empty one sends none at all, so the model would not know it is an agent).
 * Ours, short; a team with its own sets `model_instructions_file` in
 * config.toml, which Codex sends instead.
 */
const BASE_INSTRUCTIONS = [
  'You are a coding agent working in the user’s terminal and workspace through the tools you are given.',
  'Run commands with the shell tool to inspect and test; change files with apply_patch; read before you edit.',
  'Work until the user’s request is done and verified, then say briefly what you changed and what you checked.',
  'Ask only when a decision is truly the user’s; keep changes focused on the request and do not undo changes you did not make.',
].join(' ');

const LEVELS = ['low', 'medium', 'high'].map((effort) => ({ effort, description: `${effort} reasoning effort` }));

function entry({ id, model }: ListedModel, priority: number): Record<string, unknown> {
  return {
    slug: id,
    display_name: id === model.alias ? id : `${id} (${model.alias})`,
    description: `Tollgate model ${model.alias}`,
    ...(model.reasoning ? { default_reasoning_level: 'medium' } : {}),
    supported_reasoning_levels: model.reasoning ? LEVELS : [],
    shell_type: 'shell_command',
    visibility: 'list',
    supported_in_api: true,
    priority,
    upgrade: null,
    base_instructions: BASE_INSTRUCTIONS,
    model_messages: null,
    supports_reasoning_summaries: false,
    supports_reasoning_summary_parameter: false,
    default_reasoning_summary: 'none',
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: 'freeform',
    web_search_tool_type: 'text',
    truncation_policy: { mode: 'tokens', limit: 10000 },
    supports_parallel_tool_calls: true,
    ...(model.max_input_tokens !== undefined ? { context_window: model.max_input_tokens, max_context_window: model.max_input_tokens } : {}),
    auto_compact_token_limit: null,
    experimental_supported_tools: [],
    input_modalities: ['text', 'image'],
    supports_image_detail_original: false,
    prefer_websockets: false,
    tool_mode: null,
    multi_agent_version: null,
    multi_agent_reasoning_effort: null,
    use_responses_lite: false,
    supports_reasoning_effort_updates: false,
    include_skills_usage_instructions: true,
    include_apps_usage_instructions: true,
    include_plugin_usage_instructions: true,
    guardian: null,
    node_repl_auto_review_required: false,
    node_repl_disabled: false,
    requires_sandboxed_review: false,
    auto_review_model_override: null,
    model_specialty: null,
    comp_hash: '',
    minimal_client_version: '0.0.0',
    availability_nux: null,
    available_in_plans: [],
    supports_search_tool: false,
    supports_experimental_context: false,
    default_service_tier: null,
    service_tiers: [],
    additional_speed_tiers: [],
  };
}

/** The models a key may call as Codex's catalog: aliases first, then their written-out client names. */
export function codexModelCatalog(models: readonly ListedModel[]): string {
  return JSON.stringify({ models: models.map((m, i) => entry(m, i + 1)) });
}

/** Codex asks for its catalog with its version in the query; no other client sends it. */
export function asksForCodexCatalog(url: string | undefined): boolean {
  const q = url?.indexOf('?') ?? -1;
  return q >= 0 && new URLSearchParams(url!.slice(q + 1)).has('client_version');
}
