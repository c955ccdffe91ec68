/**
 * Why an answer stopped, both ways between Gemini's `finishReason` and Chat
 * Completions' `finish_reason`. Gemini says STOP after function calls too;
 * Chat says `tool_calls`.
 */

const TO_CHAT: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

/** A Gemini finish reason → Chat's (one Google adds later ends the turn normally). */
export function chatFinishOf(reason: unknown, calledTools: boolean): string {
  const chat = (typeof reason === 'string' && TO_CHAT[reason]) || 'stop';
  return chat === 'stop' && calledTools ? 'tool_calls' : chat;
}

const TO_GEMINI: Record<string, string> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  function_call: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
};

/** A Chat finish reason → Gemini's. */
export function geminiFinishOf(reason: unknown): string {
  return (typeof reason === 'string' && TO_GEMINI[reason]) || 'OTHER';
}
