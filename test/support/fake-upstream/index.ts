/**
 * A fake upstream LLM provider speaking OpenAI Chat Completions and Anthropic
 * Messages on the wire, with scriptable failures. See docs/fake-upstream.md.
 */
export { startFakeUpstream } from './server.js';
export type { Behavior, FakeUpstream, FakeUpstreamOptions, OkBehavior, RecordedRequest } from './types.js';
export { countInputTokens, DEFAULT_OUTPUT_TOKENS, tokenText } from './usage.js';
