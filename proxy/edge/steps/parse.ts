import { takeBody } from '../../request-body.js';
import { messagesFromVertex } from '../../wire/vertex/client.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

/**
 * Step `parse` (413, 400): the body read and checked by its format's rules.
 * One promise for the body's arrival; a body small enough to parse on the
 * event loop is parsed in the body's last event, without another.
 */
export function parseBody(s: CallState, deps: EdgeDeps): Promise<StepOutcome> {
  return new Promise((resolve, reject) => {
    takeBody(s.req, deps.config.proxy.maxBodyBytes, (err, raw) => {
      if (err) return reject(err);
      try {
        const body = s.route.vertex ? messagesFromVertex(raw!, s.route.vertex, s.req.headers) : raw!;
        const parsed = deps.bodies.parse(s.route.format, body, s.req.headers);
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
