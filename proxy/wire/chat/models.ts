import type { ListedModel } from '../../../shared/client-names.js';

/**
 * OpenAI's model list: `{ object: 'list', data: [{ id, object, created, owned_by }] }`,
 * with each model's output limit and (where the models file gives it) context
 * window, which OpenAI's list lacks and clients that size their context read.
 */
export function chatModelList(models: readonly ListedModel[]): string {
  return JSON.stringify({
    object: 'list',
    data: models.map(({ id, model }) => ({
      id,
      object: 'model',
      created: 0,
      owned_by: model.provider,
      ...(model.max_input_tokens !== undefined && { context_window: model.max_input_tokens }),
      max_output_tokens: model.max_output_tokens,
    })),
  });
}
