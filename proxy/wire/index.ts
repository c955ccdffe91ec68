/**
 * The wire formats, one folder each (chat/, messages/, responses/) behind one
 * table (registry.ts); this file gathers what the rest of the proxy asks of them.
 */
export { parseCall, outputCeiling, tooLarge } from './parse.js';
export { upstreamCall, countTokensCall, type UpstreamCall } from './upstream.js';
export { modelList } from './models.js';
