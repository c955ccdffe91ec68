import type { ListedModel } from '../../shared/client-names.js';
import type { WireFormat } from '../call.js';
import { WIRE } from './registry.js';

/** `GET …/models` in the client's format's list shape. */
export function modelList(format: WireFormat, models: readonly ListedModel[]): string {
  return WIRE[format].modelList(models);
}
