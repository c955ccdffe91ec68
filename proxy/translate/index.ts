import type { ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { chainAnswers } from './chain.js';
import { WIRE_FORMATS } from '../../shared/wire-formats.js';
import { WIRE } from '../wire/registry.js';
import type { AnswerTranslator, FormatTranslation, TranslateOptions, Translation } from './types.js';

export type { AnswerTranslator, Translation } from './types.js';

/** The provider entry's base URL for `format`, if it speaks it. */
export function baseUrlOf(provider: ProviderConfig, format: WireFormat): string | undefined {
  return provider.endpoints[format]?.base_url;
}

/**
 * The format the provider is called in: the client's when it speaks it
 * (bytes pass unchanged), else the first it speaks in WIRE_FORMATS' order:
 * Chat first (the pivot, one hop), else another (two hops through Chat).
 */
export function upstreamFormat(provider: ProviderConfig, client: WireFormat): WireFormat {
  if (baseUrlOf(provider, client) !== undefined) return client;
  const spoken = WIRE_FORMATS.find((f) => baseUrlOf(provider, f) !== undefined);
  // The models file refuses a provider without an endpoint (shared/models-schema.ts).
  if (spoken === undefined) throw new Error(`provider "${provider.name}" has no endpoint`);
  return spoken;
}

/** A format's mappings with the pivot (none for the pivot itself). */
function viaChat(format: WireFormat): FormatTranslation | undefined {
  const via = WIRE[format].viaChat;
  return via === 'pivot' ? undefined : via;
}

/**
 * What the provider at the end of the chain honours: a reasoning control
 * where the model entry says so, and web search where the provider runs it
 * itself (Chat's `web_search_options` becomes Anthropic's server web search
 * tool on a Messages provider; a Chat provider has none). Some clients
 * (Responses) expect a new assistant turn after their conversation, never a
 * continuation of the last one.
 */
function optionsFor(model: ModelConfig, client: WireFormat, provider: WireFormat): TranslateOptions {
  return { reasoning: model.reasoning, webSearch: WIRE[provider].providerSearches, newTurn: WIRE[client].wantsNewTurn };
}

/** One call translated: the provider's request, what it dropped, and the translator of its answer back. */
export interface TranslatedCall extends Translation {
  answer: AnswerTranslator;
}

/**
 * The answer translator alone, for a call whose request was translated in a
 * body worker (proxy/body-work/): made from the call's top level, which is
 * all an answer translator reads (the conversation of a `partial` call is
 * empty here, so translating it again costs next to nothing).
 */
export function answerTranslator(client: WireFormat, provider: WireFormat, call: ParsedCall, model: ModelConfig): AnswerTranslator {
  return translateCall(client, provider, call, model).answer;
}

/**
 * A client's call for a provider of another format, Chat being the pivot:
 * a Chat client uses the provider format's `fromChat`, a client on a Chat
 * provider its own `toChat`, and two other formats compose the client's
 * `toChat` with the provider's `fromChat` (the request forward through
 * Chat, the answer back through Chat).
 */
export function translateCall(client: WireFormat, provider: WireFormat, call: ParsedCall, model: ModelConfig): TranslatedCall {
  if (client === provider) throw new Error('A client and provider of one format need no translation.');
  const options = optionsFor(model, client, provider);
  const clientSide = viaChat(client);
  const providerSide = viaChat(provider);
  if (!clientSide || !providerSide) {
    // One side is the pivot: one hop.
    const t = clientSide ? clientSide.toChat : providerSide!.fromChat;
    return { ...t.translate(call, model, options), answer: t.answer(call) };
  }
  const toChat = clientSide.toChat;
  const fromChat = providerSide.fromChat;
  const first = toChat.translate(call, model, options);
  // The first hop's Chat body is the call the second hop reads (its stream and usage settings included).
  const middle: ParsedCall = { ...call, body: first.request, raw: Buffer.alloc(0), choices: 1 };
  const second = fromChat.translate(middle, model, options);
  return {
    request: second.request,
    dropped: [...new Set([...first.dropped, ...second.dropped])],
    answer: chainAnswers(fromChat.answer(middle), toChat.answer(call)),
  };
}
