/**
 * The features a Messages client turns on with `anthropic-beta`
 * (comma-separated, possibly over several header lines), in the order given,
 * each once.
 */
export function anthropicBetas(header: string | readonly string[] | undefined): string[] {
  if (header === undefined) return [];
  const lines = typeof header === 'string' ? [header] : header;
  const out = new Set<string>();
  for (const line of lines) {
    for (const part of line.split(',')) {
      const name = part.trim();
      if (name) out.add(name);
    }
  }
  return [...out];
}

/**
 * The kinds of provider a Messages call's `anthropic-beta` features can land
 * on. `anthropic` is Anthropic's API itself (or a provider speaking its format
 * as it does); `chat` and `responses` are reached by translation (a Responses
 * provider through Chat). `bedrock` is Claude on Amazon Bedrock: the betas go
 * in the body (`anthropic_beta`), and one it does not know is refused with a
 * 400 (mid-session), so only those it takes are sent (the set Claude Code
 * itself sends in Bedrock mode, and the long-standing ones). `vertex` is
 * Google Vertex AI serving Anthropic's models: betas in the header as on
 * Anthropic, but only those Vertex takes (the ones Claude Code's own Vertex
 * mode sends, and the features Vertex documents), one renamed; any other is
 * refused there with a 400, so it is dropped and named.
 */
export type BetaProviderKind = 'anthropic' | 'chat' | 'responses' | 'bedrock' | 'vertex';

/** What a provider kind does with a beta: sent as it is, sent under another name, kept only with reasoning, or dropped and named. */
type BetaVerdict = 'pass' | { rename: string } | 'with-reasoning' | 'drop';

interface BetaEntry {
  /** Request body fields the feature brings (what a provider without it would refuse or ignore). */
  fields: readonly string[];
  /** A kind not listed drops the beta (and names it). */
  kinds: Partial<Record<BetaProviderKind, BetaVerdict>>;
}

/**
 * Every beta Claude Code and the SDKs send that a translation keeps the
 * meaning of, by provider kind. On `anthropic` every beta passes, listed or
 * not (Anthropic knows its own features; a new one must not need a Tollgate
 * release); elsewhere a beta not in this table is dropped and named
 * (`anthropic-beta:<name>` in `x-tollgate-dropped`), its body fields going the
 * way the translation sends every field it cannot carry.
 */
export const BETAS: Readonly<Record<string, BetaEntry>> = {
  // A client's name for itself: nothing in the body.
  'claude-code-20250219': { fields: [], kinds: { chat: 'pass', responses: 'pass', vertex: 'pass' } },
  // Chat streams tool arguments as they come anyway.
  'fine-grained-tool-streaming-2025-05-14': { fields: ['tools[].eager_input_streaming'], kinds: { chat: 'pass', responses: 'pass', vertex: 'pass' } },
  // System turns mid-conversation become system messages in place.
  'mid-conversation-system-2026-04-07': { fields: ['messages[].role: system'], kinds: { chat: 'pass', responses: 'pass' } },
  // Structured output becomes `response_format`.
  'structured-outputs-2025-11-13': { fields: ['output_format', 'output_config.format'], kinds: { chat: 'pass', responses: 'pass' } },
  // Kept only when the call's reasoning control reaches the provider (`reasoning_effort`).
  'interleaved-thinking-2025-05-14': {
    fields: ['thinking'],
    kinds: { chat: 'with-reasoning', responses: 'with-reasoning', bedrock: 'pass', vertex: 'pass' },
  },
  'effort-2025-11-24': { fields: ['output_config.effort'], kinds: { chat: 'with-reasoning', responses: 'with-reasoning' } },
  // Named so the table says where they go: no translation carries them.
  'context-management-2025-06-27': { fields: ['context_management'], kinds: { bedrock: 'pass', vertex: 'pass' } },
  'context-1m-2025-08-07': { fields: [], kinds: { bedrock: 'pass', vertex: 'pass' } },
  'token-efficient-tools-2025-02-19': { fields: [], kinds: { bedrock: 'pass' } },
  // Server tools Vertex runs; Bedrock takes tool search too (Claude Code sends it there in its body).
  'web-search-2025-03-05': { fields: ['tools[].type: web_search_*'], kinds: { vertex: 'pass' } },
  'tool-search-tool-2025-10-19': {
    fields: ['tools[].type: tool_search_tool_*', 'tools[].defer_loading'],
    kinds: { bedrock: 'pass', vertex: 'pass' },
  },
  // Tool search goes by its older name on Vertex.
  'advanced-tool-use-2025-11-20': {
    fields: ['tools[].type: tool_search_tool_*', 'tools[].defer_loading'],
    kinds: { vertex: { rename: 'tool-search-tool-2025-10-19' } },
  },
  'thinking-token-count-2026-05-13': { fields: [], kinds: { bedrock: 'pass', vertex: 'pass' } },
  'computer-use-2025-01-24': { fields: ['tools[].type: computer_*'], kinds: { bedrock: 'pass' } },
  'files-api-2025-04-14': { fields: ['content[].source.file_id'], kinds: {} },
};

/**
 * The betas a call to `kind` sends (renamed where the kind says) and the ones
 * it drops (to be named). `reasoningKept`: the call's reasoning control
 * reaches the provider, so the betas that only shape reasoning keep meaning.
 */
export function betasFor(kind: BetaProviderKind, betas: readonly string[], reasoningKept: boolean): { sent: string[]; dropped: string[] } {
  const sent: string[] = [];
  const dropped: string[] = [];
  for (const beta of betas) {
    const verdict = kind === 'anthropic' ? (BETAS[beta]?.kinds.anthropic ?? 'pass') : (BETAS[beta]?.kinds[kind] ?? 'drop');
    if (verdict === 'pass' || (verdict === 'with-reasoning' && reasoningKept)) sent.push(beta);
    else if (typeof verdict === 'object') sent.push(verdict.rename);
    else dropped.push(beta);
  }
  return { sent, dropped };
}
