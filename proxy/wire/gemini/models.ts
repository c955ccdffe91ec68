import type { ListedModel } from '../../../shared/client-names.js';
import type { JsonObject } from '../../../shared/json.js';

/**
 * Google's model resources: `GET /v1beta/models` answers `{"models":[…]}`,
 * `GET /v1beta/models/{model}` one of them; `name` is `models/{id}`.
 */

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

function modelResource({ id, model }: ListedModel): JsonObject {
  const out: JsonObject = {
    name: `models/${id}`,
    displayName: id === model.alias ? id : `${id} (${model.alias})`,
    outputTokenLimit: model.max_output_tokens,
    supportedGenerationMethods: METHODS,
  };
  if (model.max_input_tokens !== undefined) out.inputTokenLimit = model.max_input_tokens;
  return out;
}

export function geminiModelList(models: readonly ListedModel[]): string {
  return JSON.stringify({ models: models.map(modelResource) });
}

export function geminiModel(model: ListedModel): string {
  return JSON.stringify(modelResource(model));
}
