import type { WireParts } from '../parts.js';
import { messagesErrorBody } from './errors.js';
import { messagesModelList } from './models.js';
import { messagesOutputLimits } from './parse.js';
import { messagesTranslation } from './translation.js';
import { messagesUsageReader } from './usage.js';

/** Anthropic thinking needs max_tokens above budget_tokens, so a ceiling at or below the budget cannot be sent. */
function lowerCeiling(body: Record<string, unknown>, tokens: number): string | undefined {
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number' && thinking.budget_tokens >= tokens) {
    return `only ${tokens} output tokens fit the money left, and thinking.budget_tokens (${thinking.budget_tokens}) must be below max_tokens`;
  }
  body.max_tokens = tokens;
  return undefined;
}

/** Anthropic's Messages API. */
export const messagesWire: WireParts = {
  edge: {
    base: 'anthropic/v1',
    paths: { messages: 'call', 'messages/count_tokens': 'count', models: 'models' },
    sdkBase: 'anthropic',
    pathMark: /\/anthropic\//,
    // Anthropic's SDK posts to `/v1/messages` and sends `anthropic-version`.
    unroutedMark: { path: /\/anthropic\/|\/v1\/messages(\/count_tokens)?$/, header: 'anthropic-version' },
    sluglessIsBadRequest: true,
  },
  clientKeyHeader: 'x-api-key',
  provider: { callPath: '/v1/messages', countPath: '/v1/messages/count_tokens', authHeader: 'x-api-key' },
  // The Messages API refuses calls without a version; a translated client of another format never sends one.
  requiredProviderHeaders: { 'anthropic-version': '2023-06-01' },
  ownHeaders: ['anthropic-version', 'anthropic-beta'],
  genAiSystem: 'anthropic',
  outputLimits: messagesOutputLimits,
  lowerCeiling,
  conversationFields: ['messages', 'system'],
  withStreamUsage: () => undefined,
  errorBody: messagesErrorBody,
  usage: messagesUsageReader,
  modelList: messagesModelList,
  countAnswer: (tokens) => ({ input_tokens: tokens }),
  viaChat: messagesTranslation,
  providerSearches: true,
  wantsNewTurn: false,
  keepsAnswers: false,
};
