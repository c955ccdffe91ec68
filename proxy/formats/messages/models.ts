/** Anthropic's model list: `{ data: [{ type, id, display_name, created_at }], has_more, first_id, last_id }`. */
export function messagesModelList(aliases: string[]): string {
  const data = aliases.map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' }));
  return JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}
