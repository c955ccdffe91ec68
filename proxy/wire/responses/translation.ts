import type { ModelConfig } from '../../../shared/models.js';
import type { ResponsesRequest } from './schema.js';
import type { ParsedCall } from '../../call.js';
import type { FormatTranslation, TranslateOptions, Translator } from '../../translate/types.js';
import type { TargetAbilities } from './options.js';
import { isObject } from '../../../shared/json.js';
import { responsesCall } from './context.js';
import { requestFromChat } from './request-from-chat.js';
import { requestToChat } from './request-to-chat.js';
import { responsesAnswerFromChat } from './stream-from-chat.js';
import { chatAnswerFromResponses } from './stream-to-chat.js';

/** What the provider honours: the model entry's reasoning flag unless the caller says otherwise; web search only where it says so. */
function abilities(model: ModelConfig, options: TranslateOptions | undefined): TargetAbilities {
  return { reasoning: options?.reasoning ?? model.reasoning, webSearch: options?.webSearch ?? false };
}

/**
 * The call's body as the Responses request it is: a ParsedCall has passed its
 * format's checks (parseCall runs parseResponsesRequest), so checking it
 * again here, once for the request and once for the answer, was two more
 * schema walks per translated call for nothing.
 */
function requestOf(call: ParsedCall): ResponsesRequest {
  return call.body as ResponsesRequest;
}

/** A Responses client on a Chat provider: its request to Chat, the Chat answer and stream back as Responses. */
const responsesToChat: Translator = {
  translate: (call, model, options) => requestToChat(requestOf(call), model.upstream_model, abilities(model, options)),
  request: (call, model) => requestToChat(requestOf(call), model.upstream_model, abilities(model, undefined)).request,
  answer: (call) => responsesAnswerFromChat(responsesCall(call.alias, requestOf(call))),
};

/** A Chat client on a Responses provider: its request to Responses, the Responses answer and stream back as Chat. */
const chatToResponses: Translator = {
  translate: (call, model, options) => requestFromChat(call.body, model.upstream_model, abilities(model, options)),
  request: (call, model) => requestFromChat(call.body, model.upstream_model, abilities(model, undefined)).request,
  answer: (call) =>
    chatAnswerFromResponses(call.alias, call.stream && isObject(call.body.stream_options) && call.body.stream_options.include_usage === true),
};

/** Responses ↔ Chat Completions, the pivot (request-*.ts, answer-*.ts and stream-*.ts beside this file). */
export const responsesTranslation: FormatTranslation = { fromChat: chatToResponses, toChat: responsesToChat };
