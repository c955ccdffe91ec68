import type { ProviderConfig } from '../../shared/models.js';
import type { WireFormat } from '../call.js';
import { chatToMessages } from './messages/request-from-chat.js';
import { messagesToChat } from './messages/request-to-chat.js';
import type { Translator } from './types.js';

export type { AnswerTranslator, Translator } from './types.js';

/** The format the provider is called in: the client's when it speaks it (bytes pass unchanged), else the other. */
export function upstreamFormat(provider: ProviderConfig, client: WireFormat): WireFormat {
  if (client === 'chat') return provider.chat_completions_base_url !== undefined ? 'chat' : 'messages';
  return provider.messages_base_url !== undefined ? 'messages' : 'chat';
}

/** The translator from a client's format to the other one. */
export function translatorFrom(client: WireFormat): Translator {
  return client === 'chat' ? chatToMessages : messagesToChat;
}
