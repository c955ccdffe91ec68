import type { ListedModel } from '../../../shared/client-names.js';

/**
 * Anthropic's model list: `{ data: [{ type, id, display_name, created_at,
 * max_input_tokens, max_tokens }], has_more, first_id, last_id }`. The two
 * limits are the fields Anthropic's Models API gives and Claude Code reads;
 * a client name's display name says which alias it is.
 */
export function messagesModelList(models: readonly ListedModel[]): string {
  const data = models.map(({ id, model }) => ({
    type: 'model',
    id,
    display_name: id === model.alias ? id : `${id} (${model.alias})`,
    created_at: '1970-01-01T00:00:00Z',
    ...(model.max_input_tokens !== undefined && { max_input_tokens: model.max_input_tokens }),
    max_tokens: model.max_output_tokens,
  }));
  return JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}
