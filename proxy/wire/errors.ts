import type { ErrorKind } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';
import { FORMATS } from './registry.js';

/** An error body in the client's format (formats/<format>/errors.ts). */
export function errorBody(format: WireFormat, kind: ErrorKind, message: string, code?: string): string {
  return FORMATS[format].errorBody(kind, message, code);
}
