/**
 * A Responses client's translation cost, in-process and without sockets:
 * passed through to a provider that speaks Responses, translated to a
 * Chat-only one, and two hops (via Chat) to a Messages-only one.
 */
import { parseCall, upstreamCall } from '../../proxy/wire/index.js';
import { createUsageTap } from '../../proxy/wire/usage-tap.js';
import type { WireFormat } from '../../proxy/call.js';
import { responsesBody } from './bodies.js';
import { CHAT_EVENT, cpuPerCall, MESSAGE_ANSWER, MESSAGE_EVENT, MESSAGE_START, MESSAGES_ONLY, MODEL, provider, TEXT } from './translate-cost.js';

const RESPONSES = provider({ responses_base_url: 'http://127.0.0.1:9/v1', chat_completions_base_url: 'http://127.0.0.1:9/v1' });
const CHAT_ONLY = provider({ chat_completions_base_url: 'http://127.0.0.1:9/v1' });

const CHAT_ANSWER = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 250, completion_tokens: 12, total_tokens: 262, prompt_tokens_details: { cached_tokens: 0 } },
    service_tier: 'default',
    system_fingerprint: 'fp_fake0001',
  }),
);
const RESPONSES_EVENT = Buffer.from(
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" tok7","logprobs":[]}\n\n',
);
const CHAT_FIRST = Buffer.from(
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"bench-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}\n\n',
);
const MESSAGE_BLOCK_START = Buffer.from(
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
);

export type ResponsesRoute = 'passThrough' | 'viaChat' | 'viaMessages';
export const RESPONSES_ROUTES: readonly ResponsesRoute[] = ['passThrough', 'viaChat', 'viaMessages'];

export interface ResponsesCost {
  /** Parse the client's body and build the provider's, plus (translated) rewrite the whole answer. */
  requestUs: Record<ResponsesRoute, number>;
  /** Read one provider event for usage, plus (translated) rewrite it into the client's events. */
  eventUs: Record<ResponsesRoute, number>;
}

const ROUTES: Record<ResponsesRoute, { provider: typeof RESPONSES; format: WireFormat; answer: Buffer; start: Buffer[]; event: Buffer }> = {
  passThrough: { provider: RESPONSES, format: 'responses', answer: Buffer.alloc(0), start: [], event: RESPONSES_EVENT },
  viaChat: { provider: CHAT_ONLY, format: 'chat', answer: CHAT_ANSWER, start: [CHAT_FIRST, CHAT_EVENT], event: CHAT_EVENT },
  viaMessages: {
    provider: MESSAGES_ONLY,
    format: 'messages',
    answer: MESSAGE_ANSWER,
    start: [MESSAGE_START, MESSAGE_BLOCK_START, MESSAGE_EVENT],
    event: MESSAGE_EVENT,
  },
};

/** Mean CPU µs per request and per streamed event on each route, `requests` and `events` calls each. */
export function measureResponsesCost(requests: number, events: number): ResponsesCost {
  const raw = Buffer.from(responsesBody(MODEL.alias));
  const streamedRaw = Buffer.from(responsesBody(MODEL.alias, { stream: true }));
  const requestUs = {} as Record<ResponsesRoute, number>;
  const eventUs = {} as Record<ResponsesRoute, number>;
  for (const route of RESPONSES_ROUTES) {
    const r = ROUTES[route];
    requestUs[route] = cpuPerCall(() => {
      const call = upstreamCall('responses', parseCall('responses', raw, {}), MODEL, r.provider);
      call.translate?.json(r.answer);
    }, requests);
    const call = upstreamCall('responses', parseCall('responses', streamedRaw, {}), MODEL, r.provider);
    if (call.format !== r.format) throw new Error(`${route}: the provider was called in ${call.format}, not ${r.format}`);
    const tap = createUsageTap(r.format, true);
    const translate = call.translate;
    for (const chunk of r.start) translate?.push(chunk);
    // A translator still waiting for its opening events would rewrite nothing and look free.
    if (translate && !translate.push(r.event).includes('response.output_text.delta')) throw new Error(`${route}: the event was not rewritten`);
    eventUs[route] = cpuPerCall(() => {
      tap.feed(r.event);
      translate?.push(r.event);
    }, events);
  }
  return { requestUs, eventUs };
}
