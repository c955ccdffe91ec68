import type { ProviderConfig } from '../../shared/models.js';
import type { WireFormat } from '../call.js';
import { messagesTranslation } from './messages/index.js';
import type { FormatTranslation, Translator } from './types.js';

export type { AnswerTranslator, Translator } from './types.js';

/** Every non-Chat format's mappings with Chat: a new format is its folder and one line here. */
const VIA_CHAT: Record<Exclude<WireFormat, 'chat'>, FormatTranslation> = {
  messages: messagesTranslation,
};

/** Whether the provider entry has a base URL for `format`. */
function speaks(provider: ProviderConfig, format: WireFormat): boolean {
  return (format === 'chat' ? provider.chat_completions_base_url : provider.messages_base_url) !== undefined;
}

/** The format the provider is called in: the client's when it speaks it (bytes pass unchanged), else the other. */
export function upstreamFormat(provider: ProviderConfig, client: WireFormat): WireFormat {
  if (speaks(provider, client)) return client;
  return client === 'chat' ? 'messages' : 'chat';
}

/**
 * The translator from a client's format to a provider's: client → Chat →
 * provider, where one of the two is Chat while there are two formats (two
 * non-Chat formats would compose the client's `toChat` with the provider's
 * `fromChat`).
 */
export function translatorFrom(client: WireFormat, provider: WireFormat): Translator {
  if (client !== 'chat') return VIA_CHAT[client].toChat;
  if (provider !== 'chat') return VIA_CHAT[provider].fromChat;
  throw new Error('A Chat Completions client and provider need no translation.');
}
