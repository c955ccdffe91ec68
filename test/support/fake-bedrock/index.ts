/**
 * A fake Amazon Bedrock runtime on loopback that checks what Bedrock checks:
 * SigV4 signatures (with `aws4`, independent of the proxy's signer),
 * session tokens and their expiry, clock skew, Bedrock API keys, and
 * InvokeModel's Anthropic body rules; answers InvokeModel, its binary
 * event stream, Converse and ConverseStream; and mints session credentials
 * as a container-credentials endpoint does.
 */
export { startFakeBedrock } from './server.js';
export type { FakeBedrock } from './server.js';
