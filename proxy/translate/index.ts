import type { ModelConfig, ProviderConfig } from '../../shared/models.js';
import type { ParsedCall, WireFormat } from '../call.js';
import { chainAnswers } from './chain.js';
import { messagesTranslation } from '../wire/messages/translation.js';
import { responsesTranslation } from '../wire/responses/translation.js';
import type { AnswerTranslator, FormatTranslation, TranslateOptions, Translation } from './types.js';

export type { AnswerTranslator, Translation } from './types.js';

/** Every non-Chat format's mappings with Chat: a new format is its folder and one line here. */
const VIA_CHAT: Record<Exclude<WireFormat, 'chat'>, FormatTranslation> = {
  messages: messagesTranslation,
  responses: responsesTranslation,
};

/** The provider entry's base URL for `format`, if it speaks it. */
export function baseUrlOf(provider: ProviderConfig, format: WireFormat): string | undefined {
  return provider.endpoints[format]?.base_url;
}

/**
 * The format the provider is called in: the client's when it speaks it
 * (bytes pass unchanged), else Chat (the pivot, one hop), else the first
 * other format it speaks (two hops through Chat).
 */
export function upstreamFormat(provider: ProviderConfig, client: WireFormat): WireFormat {
  if (baseUrlOf(provider, client) !== undefined) return client;
  if (baseUrlOf(provider, 'chat') !== undefined) return 'chat';
  return client !== 'messages' && baseUrlOf(provider, 'messages') !== undefined ? 'messages' : 'responses';
}

/**
 * What the provider at the end of the chain honours: a reasoning control
 * where the model entry says so, and web search run by the provider itself
 * on a Messages provider (Chat's `web_search_options` becomes Anthropic's
 * server web search tool there; a Chat provider has none). A Responses
 * client expects a new assistant turn after its conversation, never a
 * continuation of the last one.
 */
function optionsFor(model: ModelConfig, client: WireFormat, provider: WireFormat): TranslateOptions {
  return { reasoning: model.reasoning, webSearch: provider === 'messages', newTurn: client === 'responses' };
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
  if (client === 'chat' || provider === 'chat') {
    const t = client === 'chat' ? VIA_CHAT[provider as Exclude<WireFormat, 'chat'>].fromChat : VIA_CHAT[client].toChat;
    return { ...t.translate(call, model, options), answer: t.answer(call) };
  }
  const toChat = VIA_CHAT[client].toChat;
  const fromChat = VIA_CHAT[provider].fromChat;
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
