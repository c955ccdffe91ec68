import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorKind } from '../../shared/errors.js';
import type { JsonObject } from '../../shared/json.js';
import type { ListedModel } from '../../shared/client-names.js';
import type { WireFormat } from '../call.js';
import { chatErrorBody } from './chat/errors.js';
import { chatModelList } from './chat/models.js';
import { chatOutputLimits } from './chat/parse.js';
import { chatUsageReader } from './chat/usage.js';
import { messagesErrorBody } from './messages/errors.js';
import { messagesModelList } from './messages/models.js';
import { messagesOutputLimits } from './messages/parse.js';
import { messagesUsageReader } from './messages/usage.js';
import { responsesOutputLimits } from './responses/parse.js';
import { responsesUsageReader } from './responses/usage.js';
import type { OutputLimits } from './fields.js';
import type { UsageReader } from './usage-reader.js';

/** What the proxy needs of each wire format, whichever side of a call it is on. */
export interface FormatParts {
  /** The format's own checks of a call's body (and headers), after the shared ones (formats/parse.ts). */
  outputLimits(body: JsonObject, headers: IncomingHttpHeaders, purpose: 'call' | 'count'): OutputLimits;
  /** An error body in the format's shape. */
  errorBody(kind: ErrorKind, message: string, code?: string): string;
  /** How its answers and streams report tokens. */
  usage: UsageReader;
  /** `GET …/models` in its list shape. */
  modelList(models: readonly ListedModel[]): string;
}

/** One entry per member of WIRE_FORMATS (call.ts): a new format is a folder here and one line below. */
export const FORMATS: Record<WireFormat, FormatParts> = {
  chat: { outputLimits: chatOutputLimits, errorBody: chatErrorBody, usage: chatUsageReader, modelList: chatModelList },
  messages: { outputLimits: messagesOutputLimits, errorBody: messagesErrorBody, usage: messagesUsageReader, modelList: messagesModelList },
  // OpenAI's API: the same error shape and model list as Chat Completions.
  responses: { outputLimits: responsesOutputLimits, errorBody: chatErrorBody, usage: responsesUsageReader, modelList: chatModelList },
};
