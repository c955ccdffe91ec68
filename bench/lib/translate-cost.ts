/**
 * The translators' own CPU cost, in-process and without sockets: what a
 * translated call adds to the proxy's work, steady even on a busy machine
 * where the end-to-end figures are noisy.
 */
import { parseCall, upstreamCall } from '../../proxy/wire/index.js';
import { createUsageTap } from '../../proxy/wire/usage-tap.js';
import { modelFromEntry, providerFromEntry, type ModelConfig, type ProviderConfig } from '../../shared/models.js';
import type { ProviderEntry } from '../../shared/models-schema.js';
import { chatBody } from './bodies.js';

export const MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/bench',
  provider: 'p',
  upstream_model: 'bench-model',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 64000,
});
export const provider = (p: Omit<ProviderEntry, 'api_key_env'>): ProviderConfig => providerFromEntry('p', { api_key_env: 'K', ...p }, { K: 'k' });
const BOTH = provider({ chat_completions_base_url: 'http://127.0.0.1:9/v1', messages_base_url: 'http://127.0.0.1:9/anthropic' });
export const MESSAGES_ONLY = provider({ messages_base_url: 'http://127.0.0.1:9/anthropic' });

export const TEXT = 'tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8 tok9 tok10 tok11 tok12';
export const MESSAGE_ANSWER = Buffer.from(
  JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'bench-model',
    content: [{ type: 'text', text: TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 250, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12 },
  }),
);
export const CHAT_EVENT = Buffer.from(
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_fake0001","choices":[{"index":0,"delta":{"content":" tok7"},"logprobs":null,"finish_reason":null}],"usage":null}\n\n',
);
export const MESSAGE_EVENT = Buffer.from(
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" tok7"}}\n\n',
);

export const MESSAGE_START = Buffer.from(
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
);

/** Mean CPU µs (user + system) per call of `fn`, after a tenth as many warm-up calls. */
export function cpuPerCall(fn: () => void, n: number): number {
  for (let i = 0; i < n / 10; i++) fn();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

export interface TranslateCost {
  /** Parse the client's body and build the provider's, plus (translated) rewrite the whole answer. */
  requestUs: { passThrough: number; translated: number };
  /** Read one event for usage, plus (translated) rewrite it. */
  eventUs: { passThrough: number; translated: number };
}

/** A Chat Completions client, pass-through versus a Messages-only provider. */
export function measureTranslateCost(requests: number, events: number): TranslateCost {
  const raw = Buffer.from(chatBody(MODEL.alias));
  const passRequest = cpuPerCall(() => {
    upstreamCall('chat', parseCall('chat', raw, {}), MODEL, BOTH);
  }, requests);
  const translatedRequest = cpuPerCall(() => {
    upstreamCall('chat', parseCall('chat', raw, {}), MODEL, MESSAGES_ONLY).translate!.json(MESSAGE_ANSWER);
  }, requests);

  const chatTap = createUsageTap('chat', true);
  const messagesTap = createUsageTap('messages', true);
  const streamed = parseCall(
    'chat',
    Buffer.from(JSON.stringify({ model: MODEL.alias, messages: [{ role: 'user', content: 'x' }], stream: true })),
    {},
  );
  const answer = upstreamCall('chat', streamed, MODEL, MESSAGES_ONLY).translate!;
  answer.push(MESSAGE_START);
  const passEvent = cpuPerCall(() => chatTap.feed(CHAT_EVENT), events);
  const translatedEvent = cpuPerCall(() => {
    messagesTap.feed(MESSAGE_EVENT);
    answer.push(MESSAGE_EVENT);
  }, events);
  return { requestUs: { passThrough: passRequest, translated: translatedRequest }, eventUs: { passThrough: passEvent, translated: translatedEvent } };
}
