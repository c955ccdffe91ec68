import { takeBody } from '../../request-body.js';
import type { CallTarget } from '../../wire/parse.js';
import { messagesFromInvoke } from '../../wire/bedrock/client.js';
import { vertexMessagesHeaders } from '../../wire/vertex/client.js';
import { asCompactionCall } from '../../wire/responses/compaction.js';
import type { CallState, EdgeDeps, Route, StepOutcome } from './step.js';

/** What a path naming the model said of the call (Gemini's), for its parse. */
export function callTarget(r: Route): CallTarget | undefined {
  return r.alias === undefined ? undefined : { alias: r.alias, stream: r.stream === true };
}

/**
 * Step `parse` (413, 400): the body read and checked by its format's rules.
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
        if (s.route.vertex) vertexMessagesHeaders(s.req.headers);
        const body = s.route.bedrock
          ? messagesFromInvoke(raw!, s.route.alias!, s.route.bedrock.stream, s.req.headers)
          : s.route.action === 'compact'
            ? asCompactionCall(raw!)
            : raw!;
        const parsed = deps.bodies.parse(s.route.format, body, s.req.headers, 'call', callTarget(s.route));
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
