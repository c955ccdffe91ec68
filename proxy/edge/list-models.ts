import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../shared/errors.js';
import { isObject } from '../../shared/json.js';
import type { EdgeCall } from '../observe.js';
import { allowedAliases, decideKey } from '../decide.js';
import { listedModels, modelByName } from '../../shared/client-names.js';
import { modelList } from '../wire/index.js';
import { send } from './answer.js';
import { lookupKey } from './steps/key.js';
import type { EdgeDeps, Route } from './steps/step.js';

/** `GET …/v1/models`: the aliases the key may call, in the client's format. */
export async function listModels(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall): Promise<void> {
  const catalog = deps.config.models;
  const verdict = decideKey(await lookupKey(deps, req, r.format, obs), r.slug, deps.now());
  if (!verdict.ok) throw verdict.error;
  send(res, 200, modelList(r.format, listedModels(catalog, allowedAliases(verdict.key, catalog))), { 'x-request-id': obs.requestId });
}

/**
 * `GET …/v1/models/{alias}` (or a client name) (the SDKs' `models.retrieve`): the one entry the
 * list would show, so both stay the same shape in every format. An alias the
 * key may not call is answered as unknown: a retrieve must not tell which
 * aliases other teams have.
 */
export async function oneModel(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall): Promise<void> {
  const catalog = deps.config.models;
  const verdict = decideKey(await lookupKey(deps, req, r.format, obs), r.slug, deps.now());
  if (!verdict.ok) throw verdict.error;
  const name = r.alias ?? '';
  const model = modelByName(catalog, name);
  const allowed = model !== undefined && allowedAliases(verdict.key, catalog).includes(model.alias);
  const list: unknown = allowed ? JSON.parse(modelList(r.format, [{ id: name, model }])) : undefined;
  const entry: unknown = isObject(list) && Array.isArray(list.data) ? list.data[0] : undefined;
  if (!isObject(entry)) throw new AppError('not_found', `The model "${name}" does not exist.`, { code: 'model_not_found' });
  send(res, 200, JSON.stringify(entry), { 'x-request-id': obs.requestId });
}
