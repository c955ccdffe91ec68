import { chatErrorBody } from '../chat/errors.js';
import { chatModelList } from '../chat/models.js';
import type { WireParts } from '../parts.js';
import { responsesOutputLimits } from './parse.js';
import { responsesTranslation } from './translation.js';
import { responsesUsageReader } from './usage.js';

/** OpenAI's Responses API: the same error shape, model list and key header as Chat Completions. */
export const responsesWire: WireParts = {
  edge: {
    base: 'v1',
    paths: { responses: 'call', 'responses/input_tokens': 'count', 'responses/compact': 'compact' },
    sdkBase: 'v1',
    pathMark: /\/v1\/responses(\/|$)/,
    // An unroutable Responses call gets the OpenAI error shape either way: the pivot's answer is the same.
    unroutedMark: undefined,
    sluglessIsBadRequest: false,
    webSocket: true,
  },
  clientKeyHeader: 'authorization',
  provider: { callPath: '/responses', countPath: '/responses/input_tokens', authHeader: 'authorization' },
  requiredProviderHeaders: {},
  ownHeaders: ['openai-beta'],
  genAiSystem: 'openai',
  outputLimits: responsesOutputLimits,
  lowerCeiling: (body, tokens) => {
    body.max_output_tokens = tokens;
    return undefined;
  },
  addedCeiling: { member: 'max_output_tokens', names: ['max_output_tokens'] },
  conversationFields: ['input'],
  withStreamUsage: () => undefined,
  errorBody: chatErrorBody,
  usage: responsesUsageReader,
  modelList: chatModelList,
  countAnswer: (tokens) => ({ object: 'response.input_tokens', input_tokens: tokens }),
  viaChat: responsesTranslation,
  providerSearches: false,
  wantsNewTurn: true,
  keepsAnswers: true,
};
