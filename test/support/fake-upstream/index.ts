/**
 * A fake upstream LLM provider speaking OpenAI Chat Completions, OpenAI
 * Responses, Anthropic Messages and Google's Gemini API on the wire, with scriptable failures. See docs/fake-upstream.md.
 */
export { startFakeUpstream } from './server.js';
export type { FakeUpstream, FakeUpstreamOptions } from './types.js';
export { countInputTokens } from './usage.js';
export { recordedInputTokens } from './input-tokens.js';
