import type { IncomingHttpHeaders } from 'node:http';
import type { WireFormat } from '../../call.js';
import { anthropicBetas, betasFor } from '../../translate/betas.js';

/**
 * The client's headers as a Vertex provider gets them for a call in
 * `format`: for Anthropic's models (Messages), `anthropic-beta` keeps only
 * the betas Vertex takes (renamed where it knows them by another name), and
 * the rest are named as dropped (`anthropic-beta:<name>`); a Gemini model's
 * call carries no betas at all (headers.ts), so nothing is dropped by name.
 * The headers are copied only when the client sent betas.
 */
export function headersForVertex(client: IncomingHttpHeaders, format: WireFormat): { headers: IncomingHttpHeaders; dropped: string[] } {
  const betas = format === 'messages' ? anthropicBetas(client['anthropic-beta']) : [];
  if (betas.length === 0) return { headers: client, dropped: [] };
  // The reasoning control always reaches Vertex (it speaks Messages), so reasoning betas keep their meaning.
  const { sent, dropped } = betasFor('vertex', betas, true);
  const headers = { ...client };
  if (sent.length > 0) headers['anthropic-beta'] = [...new Set(sent)].join(',');
  else delete headers['anthropic-beta'];
  return { headers, dropped: dropped.map((name) => `anthropic-beta:${name}`) };
}
