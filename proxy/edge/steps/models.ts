import { AppError } from '../../../shared/errors.js';
import { isObject } from '../../../shared/json.js';
import { allowedAliases } from '../../decide.js';
import { listedModels, modelByName } from '../../../shared/client-names.js';
import { modelList } from '../../wire/index.js';
import { WIRE } from '../../wire/registry.js';
import { asksForCodexCatalog, codexModelCatalog } from '../../wire/responses/codex-models.js';
import { send } from '../answer.js';
import type { EdgeDeps, Keyed, StepOutcome } from './step.js';

/** Step `list`, the answer of `GET …/v1/models`: the aliases the key may call, in the client's format (Codex's catalog when Codex asks). */
export function listModels(s: Keyed, deps: EdgeDeps): StepOutcome {
  const catalog = deps.config.models;
  const listed = listedModels(catalog, allowedAliases(s.key, catalog));
  // Codex's model_catalog_url: the same models in the shape it reads their metadata from.
  const body = asksForCodexCatalog(s.req.url) ? codexModelCatalog(listed) : modelList(s.route.format, listed);
  send(s.res, 200, body, { 'x-request-id': s.requestId });
  return undefined;
}

/**
 * Step `retrieve`, the answer of `GET …/v1/models/{alias}` (or a client
 * name; the SDKs' `models.retrieve`): the one entry the list would show, so
 * both stay the same shape in every format. An alias the key may not call
 * is answered as unknown: a retrieve must not tell which aliases other teams have.
 */
export function oneModel(s: Keyed, deps: EdgeDeps): StepOutcome {
  const catalog = deps.config.models;
  const format = s.route.format;
  const name = s.route.alias ?? '';
  const model = modelByName(catalog, name);
  const allowed = model !== undefined && allowedAliases(s.key, catalog).includes(model.alias);
  const inPath = WIRE[format].modelInPath;
  const list: unknown = allowed && !inPath ? JSON.parse(modelList(format, [{ id: name, model }])) : undefined;
  // A format with its own one-model answer (Gemini's resource) gives it; the others' is their list's one entry.
  const entry: unknown =
    allowed && inPath ? JSON.parse(inPath.oneModel({ id: name, model })) : isObject(list) && Array.isArray(list.data) ? list.data[0] : undefined;
  if (!isObject(entry)) return new AppError('not_found', `The model "${name}" does not exist.`, { code: 'model_not_found' });
  send(s.res, 200, JSON.stringify(entry), { 'x-request-id': s.requestId });
  return undefined;
}
