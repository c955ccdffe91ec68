import type { FormatTranslation } from '../../translate/types.js';
import { chatToGemini } from './request-from-chat.js';
import { geminiToChat } from './request-to-chat.js';

/**
 * Gemini ↔ Chat Completions, the pivot. From Chat: a Chat client served by a
 * provider whose endpoint is Gemini's API (request-from-chat.ts, answers back
 * in answer-to-chat.ts and stream-to-chat.ts). To Chat: a Gemini client
 * served by a Chat provider (request-to-chat.ts, answers back in
 * answer-from-chat.ts and stream-from-chat.ts).
 */
export const geminiTranslation: FormatTranslation = { fromChat: chatToGemini, toChat: geminiToChat };
