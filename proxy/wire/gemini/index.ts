import type { WireParts } from '../parts.js';
import { geminiErrorBody } from './errors.js';
import { geminiModelList } from './models.js';
import { geminiOutputLimits } from './parse.js';
import { geminiPaths } from './paths.js';
import { geminiTranslation } from './translation.js';
import { geminiUsage } from './usage.js';

/** Writes `tokens` as the call's output ceiling, `generationConfig.maxOutputTokens`. */
function lowerCeiling(body: Record<string, unknown>, tokens: number): undefined {
  const config = (body.generationConfig ?? {}) as Record<string, unknown>;
  body.generationConfig = { ...config, maxOutputTokens: tokens };
  return undefined;
}

/** Google's Gemini API (generativelanguage.googleapis.com). */
export const geminiWire: WireParts = {
  edge: {
    base: 'v1beta',
    // Every Gemini path names a model: they are routed by `modelInPath`.
    paths: {},
    sdkBase: '',
    pathMark: /\/v1beta\/|:(?:stream)?[gG]enerateContent|:countTokens/,
    unroutedMark: { path: /\/v1beta\/|:(?:streamGenerateContent|generateContent|countTokens)$/, header: 'x-goog-api-key' },
    sluglessIsBadRequest: false,
    webSocket: false,
  },
  clientKeyHeader: 'x-goog-api-key',
  modelInPath: geminiPaths,
  provider: { callPath: '/v1beta/models', countPath: '/v1beta/models', authHeader: 'x-goog-api-key' },
  requiredProviderHeaders: {},
  ownHeaders: ['x-goog-api-client'],
  genAiSystem: 'gemini',
  outputLimits: geminiOutputLimits,
  lowerCeiling,
  conversationFields: ['contents', 'systemInstruction', 'tools'],
  // Google's stream reports usage on every chunk.
  withStreamUsage: () => undefined,
  errorBody: geminiErrorBody,
  usage: geminiUsage,
  modelList: geminiModelList,
  countAnswer: (tokens) => ({ totalTokens: tokens }),
  viaChat: geminiTranslation,
  providerSearches: false,
  wantsNewTurn: false,
  keepsAnswers: false,
};
