import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeCall } from '../observe.js';
import { allowedAliases, decideKey } from '../decide.js';
import { modelList } from '../formats/index.js';
import { send } from './answer.js';
import { lookupKey } from './steps/key.js';
import type { EdgeDeps, Route } from './steps/step.js';

/** `GET …/v1/models`: the aliases the key may call, in the client's format. */
export async function listModels(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall): Promise<void> {
  const catalog = deps.config.models;
  const verdict = decideKey(await lookupKey(deps, req, r.format, obs), r.slug, deps.now());
  if (!verdict.ok) throw verdict.error;
  send(res, 200, modelList(r.format, allowedAliases(verdict.key, catalog), catalog), { 'x-request-id': obs.requestId });
}
