import type { WireFormat } from '../call.js';
import { chatWire } from './chat/index.js';
import { messagesWire } from './messages/index.js';
import type { WireParts } from './parts.js';
import { responsesWire } from './responses/index.js';

export type { WireParts } from './parts.js';

/** The pivot every translation goes through, and the format of an answer no other format claims. */
export const PIVOT: WireFormat = 'chat';

/** The only list of formats in the proxy: one line per member of WIRE_FORMATS (shared/wire-formats.ts). */
export const WIRE: Record<WireFormat, WireParts> = {
  chat: chatWire,
  messages: messagesWire,
  responses: responsesWire,
};
