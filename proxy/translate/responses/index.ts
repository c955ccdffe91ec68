import type { ModelConfig } from '../../../shared/models.js';
import { parseResponsesRequest } from '../../formats/responses/schema.js';
import type { FormatTranslation, TranslateOptions, Translator } from '../types.js';
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

/** A Responses client on a Chat provider: its request to Chat, the Chat answer and stream back as Responses. */
const responsesToChat: Translator = {
  translate: (call, model, options) => requestToChat(parseResponsesRequest(call.body), model.upstream_model, abilities(model, options)),
  request: (call, model) => requestToChat(parseResponsesRequest(call.body), model.upstream_model, abilities(model, undefined)).request,
  answer: (call) => responsesAnswerFromChat(responsesCall(call.alias, parseResponsesRequest(call.body))),
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
