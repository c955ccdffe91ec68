import type { ErrorKind } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';
import { WIRE } from './registry.js';

/** An error body in the client's format (wire/<format>/errors.ts, behind wire/registry.ts). */
export function errorBody(format: WireFormat, kind: ErrorKind, message: string, code?: string): string {
  return WIRE[format].errorBody(kind, message, code);
}
