import type { FormatTranslation } from '../../translate/types.js';
import { chatToMessages } from './request-from-chat.js';
import { messagesToChat } from './request-to-chat.js';

/**
 * Messages ↔ Chat Completions, the pivot. From Chat: a Chat client served
 * by a Messages provider (request-from-chat.ts, its answers back in
 * answer-to-chat.ts and streams in stream-to-chat.ts). To Chat: a Messages
 * client served by a Chat provider (request-to-chat.ts, answers back in
 * answer-from-chat.ts and stream-from-chat.ts).
 */
export const messagesTranslation: FormatTranslation = { fromChat: chatToMessages, toChat: messagesToChat };
