import { takeBody } from '../../request-body.js';
import type { CallTarget } from '../../wire/parse.js';
import { messagesFromInvoke } from '../../wire/bedrock/client.js';
import { chatCallFromConverse } from '../../wire/bedrock/converse-to-chat.js';
import { safeDroppedName } from '../../dropped.js';
import { messagesCountFromVertex, vertexMessagesHeaders } from '../../wire/vertex/client.js';
import { asCompactionCall } from '../../wire/responses/compaction.js';
import type { CallState, EdgeDeps, Route, StepOutcome } from './step.js';

/** What a path naming the model said of the call (Gemini's), for its parse. */
export function callTarget(r: Route): CallTarget | undefined {
  return r.alias === undefined ? undefined : { alias: r.alias, stream: r.stream === true };
}

/**
 * The body the route's format checks: a cloud path's body as the call it
 * stands for (Bedrock's InvokeModel as Messages, its Converse as Chat, with
 * what Chat cannot carry named; Vertex's rawPredict as Messages, read as it came), a
 * `responses/compact` body as the compaction call it asks for, else as sent.
 */
function callBody(s: CallState, raw: Buffer): Buffer {
  const { bedrock, vertex } = s.route;
  if (bedrock?.api === 'converse') {
    const chat = chatCallFromConverse(raw, s.route.alias!, bedrock.stream);
    s.clientDropped = chat.dropped.map(safeDroppedName);
    return chat.body;
  }
  if (bedrock) return messagesFromInvoke(raw, s.route.alias!, bedrock.stream, s.req.headers);
  if (vertex) {
    // A count names its model in the body; a call's is the path's (`alias`), put in by the parse, so its bytes are not rewritten.
    if (s.route.action === 'count') return messagesCountFromVertex(raw, s.req.headers);
    vertexMessagesHeaders(s.req.headers);
    return raw;
  }
  return s.route.action === 'compact' ? asCompactionCall(raw) : raw;
}

/**
 * Step `parse` (413, 400): the body of a call or a token count read and checked by its format's rules.
 * One promise for the body's arrival; a body small enough to parse on the
 * event loop is parsed in the body's last event, without another. A
 * `responses/compact` body becomes the compaction call it asks for first;
 * a Vertex body is parsed as it came, the path's model its alias.
 */
export function parseBody(s: CallState, deps: EdgeDeps): Promise<StepOutcome> {
  return new Promise((resolve, reject) => {
    takeBody(s.req, deps.config.proxy.maxBodyBytes, (err, raw) => {
      if (err) return reject(err);
      try {
        const body = callBody(s, raw!);
        // A token count's body is a call's without what only generation needs (`max_tokens`).
        const purpose = s.route.action === 'count' ? 'count' : 'call';
        const parsed = deps.bodies.parse(s.route.format, body, s.req.headers, purpose, callTarget(s.route));
        if (!(parsed instanceof Promise)) {
          s.call = parsed;
          return resolve(undefined);
        }
        parsed.then((call) => {
          s.call = call;
          resolve(undefined);
        }, reject);
      } catch (thrown) {
        // Passed on as it was thrown: the edge answers any value (toAppError).
        reject(thrown as Error);
      }
    });
  });
}
