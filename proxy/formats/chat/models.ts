import type { ModelCatalog } from '../../../shared/models.js';

/** OpenAI's model list: `{ object: 'list', data: [{ id, object, created, owned_by }] }`. */
export function chatModelList(aliases: string[], catalog: ModelCatalog): string {
  return JSON.stringify({
    object: 'list',
    data: aliases.map((id) => ({ id, object: 'model', created: 0, owned_by: catalog.models.get(id)?.provider ?? 'tollgate' })),
  });
}
