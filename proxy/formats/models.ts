import type { ModelCatalog } from '../../shared/models.js';
import type { WireFormat } from '../call.js';
import { FORMATS } from './registry.js';

/** `GET …/models` in the client's format's list shape. */
export function modelList(format: WireFormat, aliases: string[], catalog: ModelCatalog): string {
  return FORMATS[format].modelList(aliases, catalog);
}
