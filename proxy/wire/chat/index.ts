import { isObject } from '../../../shared/json.js';
import type { WireParts } from '../parts.js';
import { chatErrorBody } from './errors.js';
import { chatModelList } from './models.js';
import { chatOutputLimits } from './parse.js';
import { chatUsageReader } from './usage.js';

/** Whichever ceiling field the request names (both, when it names both); a request naming none gets the current one. */
function lowerChatCeiling(body: Record<string, unknown>, tokens: number): undefined {
  if (body.max_tokens !== undefined && body.max_tokens !== null) body.max_tokens = tokens;
  if (body.max_completion_tokens !== undefined || body.max_tokens === undefined || body.max_tokens === null) body.max_completion_tokens = tokens;
  return undefined;
}

/** A streamed Chat Completions call reports usage only in a final chunk it asks for with `stream_options.include_usage`. */
function withStreamUsage(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const options = isObject(body.stream_options) ? body.stream_options : {};
  return options.include_usage === true ? undefined : { ...body, stream_options: { ...options, include_usage: true } };
}

/** OpenAI's Chat Completions API: the pivot every translation goes through. */
export const chatWire: WireParts = {
  edge: {
    base: 'v1',
    paths: { 'chat/completions': 'call', models: 'models', embeddings: 'embed' },
    sdkBase: 'v1',
    pathMark: undefined,
    unroutedMark: undefined,
    sluglessIsBadRequest: false,
    webSocket: false,
  },
  clientKeyHeader: 'authorization',
  provider: { callPath: '/chat/completions', countPath: undefined, authHeader: 'authorization' },
  requiredProviderHeaders: {},
  ownHeaders: ['openai-beta'],
  genAiSystem: 'openai',
  outputLimits: chatOutputLimits,
  lowerCeiling: lowerChatCeiling,
  addedCeiling: { member: 'max_completion_tokens', names: ['max_tokens', 'max_completion_tokens'] },
  conversationFields: ['messages'],
  withStreamUsage,
  errorBody: chatErrorBody,
  usage: chatUsageReader,
  modelList: chatModelList,
  countAnswer: (tokens) => ({ input_tokens: tokens }),
  viaChat: 'pivot',
  providerSearches: false,
  wantsNewTurn: false,
  keepsAnswers: false,
};
